// The example dispatcher hook (bundle/hooks/50-mesh-host-rouse): it rouses
// mesh-host on the events that change where packets go and not on `down`
// (L3). Run as NetworkManager and networkd-dispatcher run it, against real
// mesh-host processes waiting to be enrolled, which say each rouse they take:
// one that must be roused, one that must never be.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { runAny } from '../../src/sys/proc.js';
import { mkdtempSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { spawnProc, MESH_HOST, type Proc } from '../harness/mesh.js';
import { until } from '../declare/helpers.js';
import { lines } from './fake_broker.js';

/** The script in the source tree, wherever the tests were compiled to. */
function hookPath(): string {
  for (let d = dirname(fileURLToPath(import.meta.url)); d !== '/'; d = dirname(d)) {
    const p = join(d, 'bundle', 'hooks', '50-mesh-host-rouse');
    if (existsSync(p)) return p;
  }
  throw new Error('bundle/hooks/50-mesh-host-rouse not found above the test');
}

interface Ctx {
  dir: string;
  roused: Proc;
  spared: Proc;
  pidRoused: string;
  pidSpared: string;
}
const K = suite<Ctx>('dispatcher hook (L3)');

K.before(async (ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'mesh-hook-'));
  const hosted = async (name: string) => {
    const p = spawnProc(process.execPath, [MESH_HOST, 'run'], { ...process.env, MESH_HOST_DIR: join(ctx.dir, name) });
    await p.waitFor(/no identity yet/);
    const f = join(ctx.dir, `${name}.pid`);
    writeFileSync(f, `${p.child.pid}\n`);
    return [p, f] as const;
  };
  [ctx.roused, ctx.pidRoused] = await hosted('roused');
  [ctx.spared, ctx.pidSpared] = await hosted('spared');
});

K.after(async (ctx) => {
  await Promise.allSettled([ctx.roused?.stop(), ctx.spared?.stop()]);
  rmSync(ctx.dir, { recursive: true, force: true });
});

async function hook(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  const r = await runAny(hookPath(), args, { env: { PATH: process.env.PATH, ...env } });
  return { code: r.code, out: r.stdout + r.stderr };
}

const rousedCount = (p: Proc) => lines(p.output(), /roused before this machine is enrolled/).length;

async function rouses(ctx: Ctx, args: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const before = rousedCount(ctx.roused);
  const r = await hook(args, { MESH_HOST_PIDFILE: ctx.pidRoused, ...env });
  assert.is(r.code, 0);
  assert.match(r.out, new RegExp(`roused mesh-host \\(pid ${ctx.roused.child.pid}\\)`));
  await until(
    `${args.join(' ') || JSON.stringify(env)} rouses`,
    async () => rousedCount(ctx.roused) === before + 1,
    10_000,
  );
}

async function spares(ctx: Ctx, args: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  const r = await hook(args, { MESH_HOST_PIDFILE: ctx.pidSpared, ...env });
  assert.is(r.code, 0);
  assert.not.match(r.out, /roused mesh-host/);
}

K(
  'NetworkManager: up, dhcp4-change, dhcp6-change and connectivity FULL rouse; down and the rest do not',
  async (ctx) => {
    await spares(ctx, ['eth0', 'down']);
    await spares(ctx, ['eth0', 'pre-down']);
    await spares(ctx, ['eth0', 'pre-up']);
    await spares(ctx, ['wg0', 'vpn-down']);
    await spares(ctx, ['eth0', 'connectivity-change'], { CONNECTIVITY_STATE: 'LIMITED' });
    await spares(ctx, ['eth0', 'connectivity-change'], { CONNECTIVITY_STATE: 'NONE' });
    await rouses(ctx, ['eth0', 'up']);
    await rouses(ctx, ['eth0', 'dhcp4-change']);
    await rouses(ctx, ['eth0', 'dhcp6-change']);
    await rouses(ctx, ['eth0', 'connectivity-change'], { CONNECTIVITY_STATE: 'FULL' });
  },
);

K('networkd-dispatcher: routable rouses; any other state does not', async (ctx) => {
  await spares(ctx, [], { IFACE: 'eth0', STATE: 'degraded' });
  await spares(ctx, [], { IFACE: 'eth0', STATE: 'off' });
  await rouses(ctx, [], { IFACE: 'eth0', STATE: 'routable' });
});

K('the host spared was never signalled', async (ctx) => {
  // Every sparing run above finished long before the rousing ones were seen.
  assert.is(rousedCount(ctx.spared), 0, ctx.spared.output());
  assert.is(ctx.spared.child.exitCode, null);
});

K(
  'a pid that is not mesh-host (a stale pid file) is left alone, and a missing pid file is not an error',
  async (ctx) => {
    // SIGUSR1 kills a process that does not handle it: this one would die.
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const f = join(ctx.dir, 'stale.pid');
      writeFileSync(f, `${other.pid}\n`);
      const r = await hook(['eth0', 'up'], { MESH_HOST_PIDFILE: f });
      assert.is(r.code, 0);
      await new Promise((res) => setTimeout(res, 300));
      assert.is(other.signalCode, null, 'not signalled');
      assert.is(other.exitCode, null);
      assert.match(r.out, new RegExp(`pid ${other.pid} in ${f} is not mesh-host; left alone`));
      const gone = await hook(['eth0', 'up'], { MESH_HOST_PIDFILE: join(ctx.dir, 'none.pid') });
      assert.is(gone.code, 0);
      assert.match(gone.out, /mesh-host is not running/);
    } finally {
      other.kill('SIGKILL');
    }
  },
);

K.run();
