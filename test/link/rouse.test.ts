// L3: SIGUSR1 ends the current attempt or connection at once, two rouses in
// the same instant are one, and the backoff is not reset (nor moved) by it.
// Real mesh-host processes; the hung attempt is a loopback server that
// accepts and never answers TLS, as a socket silently dead after a resume.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { rmSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnProc, MESH_HOST, freshMesh, type Proc, type Mesh } from '../harness/mesh.js';
import { fakeBroker, identityFor, lines, type FakeBroker } from './fake_broker.js';
import { until } from '../declare/helpers.js';

interface Ctx {
  procs: Proc[];
  dirs: string[];
  servers: FakeBroker[];
  mesh?: Mesh;
}
const R = suite<Ctx>('rouse (L3)', { procs: [], dirs: [], servers: [] });

R.after(async (ctx) => {
  await Promise.allSettled(ctx.procs.map((p) => p.stop()));
  await Promise.allSettled(ctx.servers.map((s) => s.close()));
  await ctx.mesh?.stop();
  for (const d of ctx.dirs) rmSync(d, { recursive: true, force: true });
});

function start(ctx: Ctx, dir: string, backoff: { min: number; max: number }): Proc {
  const p = spawnProc(process.execPath, [MESH_HOST, 'run'], {
    ...process.env,
    MESH_HOST_DIR: dir,
    MESH_HOST_ROOTS: dir,
    MESH_HOST_BACKOFF_MIN_SECONDS: String(backoff.min),
    MESH_HOST_BACKOFF_MAX_SECONDS: String(backoff.max),
    MESH_HOST_BACKOFF_RESET_SECONDS: '30',
    // The plain doubling: the test names each wait.
    MESH_HOST_BACKOFF_JITTER: 'none',
  });
  ctx.procs.push(p);
  return p;
}

const next = /next attempt in ([\d.]+)s/;
const ending = /roused: ending the current attempt/;

R(
  'two rouses in the same instant during a hung attempt make exactly one new attempt, and the backoff is unchanged',
  async (ctx) => {
    // Two quick refusals move the backoff to 0.5, 1; the third attempt and on hang.
    const srv = await fakeBroker((n) => (n <= 2 ? 'refuse' : 'hang'));
    ctx.servers.push(srv);
    const dir = await identityFor(srv.port);
    ctx.dirs.push(dir);
    const host = start(ctx, dir, { min: 0.5, max: 60 });
    await host.waitFor(/next attempt in 0\.5s/);
    await host.waitFor(/next attempt in 1s/);
    await until('the third attempt, hanging', async () => srv.accepted() === 3);
    const mark = host.output().length;
    const pid = host.child.pid!;
    process.kill(pid, 'SIGUSR1');
    process.kill(pid, 'SIGUSR1');
    // Signals of one kind still pending in the kernel merge into one: one more,
    // once the first was taken, makes sure two reach the host within 500 ms.
    await host.waitFor(ending, 10_000, mark);
    process.kill(pid, 'SIGUSR1');
    await until('the last rouse taken', async () => lines(host.output().slice(mark), /roused/).length >= 2, 10_000);
    await until('the new attempt', async () => srv.accepted() >= 4);
    // The new attempt hangs too, until its own 15 s timeout; then the next wait is told.
    const m = await host.waitFor(next, 40_000, mark);
    const after = host.output().slice(mark);
    assert.is(srv.accepted(), 4, 'exactly one new attempt');
    assert.is(lines(after, ending).length, 1, 'one rouse acted on');
    assert.ok(
      lines(after, /roused again within 500 ms: taken as the same rouse/).length >= 1,
      'the other one said as the same',
    );
    assert.is(m[1], '2', 'the wait after 0.5 s and 1 s is 2 s: the rouse neither reset nor moved the backoff');
    assert.match(
      after,
      /cannot reach the broker at 127\.0\.0\.1:\d+ \(no TLS answer from 127\.0\.0\.1:\d+ within 15s\); attempt 3/,
    );
  },
);

R('a rouse during the wait skips the wait, and the wait after is the one that was due', async (ctx) => {
  const srv = await fakeBroker(() => 'refuse');
  ctx.servers.push(srv);
  const dir = await identityFor(srv.port);
  ctx.dirs.push(dir);
  const host = start(ctx, dir, { min: 30, max: 120 });
  await host.waitFor(/next attempt in 30s/);
  assert.is(srv.accepted(), 1);
  const mark = host.output().length;
  host.child.kill('SIGUSR1');
  // Well inside the 30 s wait: only a skipped wait gets here.
  const m = await host.waitFor(next, 15_000, mark);
  assert.is(srv.accepted(), 2);
  assert.is(m[1], '60', 'not reset to 30 by the rouse');
});

R('a rouse before there is an identity is taken by mesh-host, not by node (no debugger opens)', async (ctx) => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-host-hosted-'));
  ctx.dirs.push(dir);
  const host = start(ctx, dir, { min: 2, max: 120 });
  await host.waitFor(/no identity yet/);
  host.child.kill('SIGUSR1');
  const m = await host.waitFor(/Debugger listening|roused before this machine is enrolled/, 10_000);
  assert.is(
    m[0],
    'roused before this machine is enrolled',
    `node's own SIGUSR1 opened an inspector port:\n${host.output()}`,
  );
  assert.is(host.child.exitCode, null, 'still running, still waiting');
});

R('SIGTERM during a hung attempt ends the host without waiting the attempt out', async (ctx) => {
  const srv = await fakeBroker(() => 'hang');
  ctx.servers.push(srv);
  const dir = await identityFor(srv.port);
  ctx.dirs.push(dir);
  const host = start(ctx, dir, { min: 2, max: 120 });
  // Attempting means its SIGTERM handler is in place (run.ts sets it first).
  await until('a hanging attempt', async () => srv.accepted() === 1);
  await host.stop(); // SIGTERM; SIGKILL only if still there 10 s later
  assert.is(host.child.signalCode, null, 'it had to be killed: something of the ended attempt kept it alive');
  assert.is(host.child.exitCode, 0);
});

R('a rouse while connected ends the connection and connects again at once', async (ctx) => {
  ctx.mesh = await freshMesh();
  await ctx.mesh.serve();
  // A 30 s floor: reconnecting within the test's wait shows there was no wait.
  const { proc } = await ctx.mesh.joined('lap2', {
    MESH_HOST_BACKOFF_MIN_SECONDS: '30',
    MESH_HOST_BACKOFF_MAX_SECONDS: '120',
  });
  ctx.procs.push(proc);
  const user = `${ctx.mesh.prefix}node.lap2`;
  const conns = async () =>
    ((await (await ctx.mesh!.mgmt('GET', '/connections')).json()) as { user: string; name: string }[])
      .filter((c) => c.user === user)
      .map((c) => c.name);
  const [before] = await until('the node connection is listed', async () => {
    const c = await conns();
    return c.length === 1 && c;
  });
  const mark = proc.output().length;
  proc.child.kill('SIGUSR1');
  await proc.waitFor(/ended the connection \(roused\); connecting again now/, 10_000, mark);
  await proc.waitFor(/connected to /, 15_000, mark);
  assert.not.match(proc.output().slice(mark), next, 'no wait between');
  await until('the old connection gone and a new one listed', async () => {
    const c = await conns();
    return c.length === 1 && c[0] !== before;
  });
});

R.run();
