// O3: `mesh-host overlay take --tunnel wg0` on a machine whose wg0 was raised
// by hand with wg-quick before the mesh. Real hosts in namespaces, a real
// `mesh serve` answering the rekey.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { rmSync, readFileSync, mkdtempSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { runAny } from '../../src/sys/proc.js';
import { join } from 'node:path';
import { x25519 } from '@noble/curves/ed25519.js';
import { freshMesh, MESH_HOST, type Mesh, type Proc } from '../harness/mesh.js';
import type { Lab } from '../../lab/netns/topology.js';
import { labFor, machines, enrolInside, pings, appliedNewest as newestApplied, type Machine } from './machines.js';
import { cli, until } from '../declare/helpers.js';

const PORT = 51820;
const FOUND = '10.99.0.200';

interface Ctx {
  mesh: Mesh;
  serve: Proc;
  lab: Lab;
  procs: Proc[];
  m: Record<string, Machine>;
  runs: Record<string, Proc>;
  found: { priv: string; pub: string };
}
const Take = suite<Ctx>('overlay take (O3)');
let current: Ctx | undefined;

async function teardown(ctx: Ctx): Promise<void> {
  await Promise.allSettled(ctx.procs.map((p) => p.stop()));
  await ctx.lab?.down();
  await ctx.mesh?.stop();
  for (const m of Object.values(ctx.m ?? {})) rmSync(m.dir, { recursive: true, force: true });
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    void (current ? teardown(current) : Promise.resolve()).finally(() => process.exit(130));
  });
}

async function join_(ctx: Ctx, name: string, issue: string[]): Promise<void> {
  const m = (ctx.m[name] = machines(ctx.lab, ctx.procs)(name));
  ctx.runs[name] = await enrolInside(ctx.mesh, m, issue);
}

Take.before(async (ctx) => {
  current = ctx;
  ctx.procs = [];
  ctx.m = {};
  ctx.runs = {};
  ctx.mesh = await freshMesh();
  ctx.lab = await labFor(ctx.mesh, {
    sites: [{ name: 'a', machines: ['t1', 'p1'], forwards: [{ udp: PORT, to: 't1' }] }],
  });
  // The tunnel that was there before the mesh: its own key, the mesh's port,
  // an address the mesh did not choose. Raised before enrolment, as on a real
  // machine: since W2 an enrolment declares t1 at once, and a mesh0 raised
  // first would hold the port (wg-quick up wg0: "Address already in use").
  const sk = x25519.utils.randomSecretKey();
  ctx.found = {
    priv: Buffer.from(sk).toString('base64'),
    pub: Buffer.from(x25519.getPublicKey(sk)).toString('base64'),
  };
  await ctx.lab.exec(
    't1',
    ['/usr/bin/tee', '/etc/wireguard/wg0.conf'],
    `[Interface]\nPrivateKey = ${ctx.found.priv}\nListenPort = ${PORT}\nAddress = ${FOUND}/16\n`,
  );
  await ctx.lab.exec('t1', ['/usr/bin/chmod', '600', '/etc/wireguard/wg0.conf']);
  await ctx.lab.exec('t1', ['/usr/bin/wg-quick', 'up', 'wg0']);
  ctx.serve = await ctx.mesh.serve();
  // t1 is dialable, p1 at its site is not: they peer directly, no hub needed.
  await Promise.all([
    join_(ctx, 't1', ['--site', 'a', '--dialable', `${ctx.lab.publicAddress('a')}:${PORT}`]),
    join_(ctx, 'p1', ['--site', 'a']),
  ]);
  // Each enrolment owed the nodes it changed their declarations (W2): nothing typed.
  // t1's mesh0 cannot start beside the found tunnel: its failure is reported, wg0 runs on.
  await appliedNewest(ctx, 't1');
  await appliedNewest(ctx, 'p1');
});
Take.after(teardown);

const appliedNewest = (ctx: Ctx, name: string) => newestApplied(ctx.mesh, ctx.runs[name]!, name);

async function take(ctx: Ctx): Promise<{ code: number; account: Record<string, unknown> }> {
  const r = await ctx.m.t1!.host(['overlay', 'take', '--tunnel', 'wg0', '--json']);
  if (!r.stdout.trim()) throw new Error(`take printed no account (${r.code}): ${r.stderr}`);
  const account = JSON.parse(r.stdout);
  assert.equal(
    JSON.parse(readFileSync(join(ctx.m.t1!.dir, 'overlay-take.json'), 'utf8')),
    account,
    'the account printed is the account kept',
  );
  return { code: r.code, account };
}
const meshKey = async (ctx: Ctx) =>
  (await ctx.mesh.store.admin`select encode(overlay_key, 'base64') as k from inventory.node where name = 't1'`)[0]!
    .k as string;
const listening = async (ctx: Ctx, iface: string) =>
  (await ctx.lab.execAny('t1', ['/usr/bin/wg', 'show', iface, 'listen-port'])).stdout.trim();

/** take of TUNNEL on t1, from host folder DIR (t1's own by default); its account, with the code take exits with. */
async function takeOf(
  ctx: Ctx,
  tunnel: string,
  dir = ctx.m.t1!.dir,
): Promise<{ code: number; account: Record<string, unknown> }> {
  const r = await runAny(
    'nsenter',
    [
      '-t',
      String(ctx.lab.pid('t1')),
      '-m',
      '-n',
      '--',
      process.execPath,
      MESH_HOST,
      'overlay',
      'take',
      '--tunnel',
      tunnel,
      '--json',
    ],
    { env: { ...process.env, MESH_HOST_DIR: dir } },
  );
  if (!r.stdout.trim()) throw new Error(`take printed no account (${r.code}): ${r.stderr}`);
  return { code: r.code, account: JSON.parse(r.stdout) };
}
const notTaken = (t: { code: number; account: Record<string, unknown> }, code: string): string => {
  assert.is(t.account.state, 'not taken');
  assert.is(t.code, 2);
  assert.is(t.account.told, false, 'the mesh was not told');
  assert.ok(String(t.account.reason).endsWith(`(${code}).`), String(t.account.reason));
  return String(t.account.reason);
};

Take(
  'O3: what cannot be taken over is refused with its code before anything stops: raised by hand (MSHK2), nothing declared (MSHK3), another port (MSHK5)',
  async (ctx) => {
    const before = await meshKey(ctx);
    // Raised by hand: up, with no wg-quick file to start it again from (userspace, as wg-quick runs it here).
    await ctx.lab.exec('t1', ['/usr/bin/wireguard-go', 'wghand']);
    await ctx.lab.exec('t1', ['/usr/sbin/ip', 'link', 'set', 'wghand', 'up']);
    try {
      assert.match(
        notTaken(await takeOf(ctx, 'wghand'), 'MSHK2'),
        /^wghand was raised by hand, not from \/etc\/wireguard\/wghand\.conf: .*: take it down/,
      );
    } finally {
      await ctx.lab.execAny('t1', ['/usr/sbin/ip', 'link', 'delete', 'wghand']);
    }
    // Nothing declared: the same machine's identity with no kept declaration beside it.
    const bare = mkdtempSync(join(tmpdir(), 'overlay-take-bare-'));
    try {
      copyFileSync(join(ctx.m.t1!.dir, 'identity.json'), join(bare, 'identity.json'));
      assert.match(
        notTaken(await takeOf(ctx, 'wg0', bare), 'MSHK3'),
        /^the mesh has declared no overlay interface for t1 yet: on the control plane, mesh declare --all --changed/,
      );
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
    // Another port than the mesh declares for t1 (its dialable port).
    const sk = Buffer.from(x25519.utils.randomSecretKey()).toString('base64');
    await ctx.lab.exec(
      't1',
      ['/usr/bin/tee', '/etc/wireguard/wgport.conf'],
      `[Interface]\nPrivateKey = ${sk}\nListenPort = ${PORT + 9}\nAddress = 10.98.0.201/16\n`,
    );
    await ctx.lab.exec('t1', ['/usr/bin/chmod', '600', '/etc/wireguard/wgport.conf']);
    await ctx.lab.exec('t1', ['/usr/bin/wg-quick', 'up', 'wgport']);
    try {
      assert.match(
        notTaken(await takeOf(ctx, 'wgport'), 'MSHK5'),
        new RegExp(`^wgport listens on ${PORT + 9} but the mesh declares mesh0 on ${PORT}: set the mesh's port`),
      );
      assert.is(await listening(ctx, 'wgport'), String(PORT + 9), 'the found tunnel still runs');
    } finally {
      await ctx.lab.execAny('t1', ['/usr/bin/wg-quick', 'down', 'wgport']);
      await ctx.lab.execAny('t1', ['/usr/bin/rm', '-f', '/etc/wireguard/wgport.conf']);
    }
    assert.is(await listening(ctx, 'wg0'), String(PORT), 'the tunnel there before the mesh still runs');
    assert.is(await meshKey(ctx), before, 'the mesh was not told anything');
  },
);

Take(
  'O3: a declared interface that does not match the found tunnel is refused before anything stops, naming the remedy',
  async (ctx) => {
    const before = await meshKey(ctx);
    const { code, account } = await take(ctx);
    assert.is(account.state, 'not taken');
    assert.match(
      String(account.reason),
      new RegExp(`mesh overlay address t1 ${FOUND.replace(/\./g, '\\.')}.* \\(MSHG7\\)\\.$`),
    );
    assert.is(account.told, false);
    assert.is(account.foundTunnel, 'running');
    assert.is(code, 2);
    assert.is(await listening(ctx, 'wg0'), String(PORT), 'the found tunnel still runs');
    assert.is(await meshKey(ctx), before, 'the mesh was not told anything');
  },
);

Take(
  'O3: a mesh interface that fails to start has the found tunnel started again; the mesh was told the key first',
  async (ctx) => {
    // The command itself owes t1 its new address (W2).
    await cli(ctx.mesh, 'overlay', 'address', 't1', FOUND);
    await appliedNewest(ctx, 't1');
    // The mesh's interface cannot start: its file's place is taken by a directory.
    await ctx.lab.exec('t1', ['/usr/bin/rm', '-f', '/etc/wireguard/mesh0.conf']);
    await ctx.lab.exec('t1', ['/usr/bin/mkdir', '-p', '/etc/wireguard/mesh0.conf/x']);
    const { code, account } = await take(ctx);
    assert.is(account.state, 'down');
    assert.is(account.foundTunnel, 'started again');
    assert.ok(account.told && account.written, 'told first, written second');
    assert.is(code, 3);
    assert.is(await listening(ctx, 'wg0'), String(PORT), 'the found tunnel runs again');
    assert.is(await meshKey(ctx), ctx.found.pub, 'the mesh learned the found key');
    // wg prints the key clamped: compare what it is, its public half.
    const held = Buffer.from(readFileSync(join(ctx.m.t1!.dir, 'overlay.key'), 'utf8').trim(), 'base64');
    assert.is(
      Buffer.from(x25519.getPublicKey(held)).toString('base64'),
      ctx.found.pub,
      'the found key is the overlay key',
    );
  },
);

Take(
  'O3: taken: the mesh interface listens on the found port and address with the found key, the found tunnel is stopped, and the peer reaches it',
  async (ctx) => {
    await ctx.lab.exec('t1', ['/usr/bin/rm', '-r', '/etc/wireguard/mesh0.conf']);
    const { code, account } = await take(ctx);
    assert.is(account.state, 'taken', String(account.reason));
    assert.is(code, 0);
    assert.is(await listening(ctx, 'wg0'), '', 'the found tunnel is down');
    assert.is(await listening(ctx, 'mesh0'), String(PORT));
    assert.is((await ctx.lab.exec('t1', ['/usr/bin/wg', 'show', 'mesh0', 'public-key'])).trim(), ctx.found.pub);
    assert.match(
      await ctx.lab.exec('t1', ['/usr/sbin/ip', '-o', '-4', 'addr', 'show', 'dev', 'mesh0']),
      new RegExp(`inet ${FOUND.replace(/\./g, '\\.')}/16`),
    );
    // serve declared p1 again with t1's new key when the rekey was recorded; p1's host applied it.
    await until(
      "p1 holds t1's new key",
      async () =>
        (await ctx.lab.execAny('p1', ['/usr/bin/wg', 'show', 'mesh0', 'peers'])).stdout.includes(ctx.found.pub),
      120_000,
    );
    const p1 = JSON.parse(await cli(ctx.mesh, 'overlay', 'show', '--json')).nodes.find(
      (n: { name: string }) => n.name === 'p1',
    ).address as string;
    assert.ok(await pings(ctx.lab, 'p1', FOUND), 'p1 -> t1 over the overlay');
    assert.ok(await pings(ctx.lab, 't1', p1), 't1 -> p1 over the overlay');
  },
);

Take(
  'ADR 0105: the found tunnel started again by hand beside the taken one is said, by the host and in its report, and not stopped',
  async (ctx) => {
    // Started again from its file by a person; the port is mesh0's now, so they let wg pick one.
    await ctx.lab.exec('t1', ['/usr/bin/sed', '-i', '/^ListenPort/d', '/etc/wireguard/wg0.conf']);
    await ctx.lab.exec('t1', ['/usr/bin/wg-quick', 'up', 'wg0']);
    const mark = ctx.runs.t1!.output().length;
    const smark = ctx.serve.output().length;
    await cli(ctx.mesh, 'declare', 't1');
    await ctx.runs.t1!.waitFor(
      /wireguard mesh0: wg0, the tunnel mesh0 took over, was started again by hand beside it: it is left running .*wg-quick down wg0/,
      120_000,
      mark,
    );
    await ctx.serve.waitFor(
      /report: t1 could not apply wireguard:mesh0 \(wg0, the tunnel mesh0 took over, was started again by hand/,
      60_000,
      smark,
    );
    assert.ok(
      (await ctx.lab.execAny('t1', ['/usr/sbin/ip', 'link', 'show', 'dev', 'wg0'])).code === 0,
      'the found tunnel is left running',
    );
    assert.is(await listening(ctx, 'mesh0'), String(PORT), "the mesh's interface carries on");
    await ctx.lab.exec('t1', ['/usr/bin/wg-quick', 'down', 'wg0']);
  },
);

Take("O3: the mesh's own interface is not taken over: MSHK4, and it carries on", async (ctx) => {
  assert.match(
    notTaken(await takeOf(ctx, 'mesh0'), 'MSHK4'),
    /^mesh0 is the mesh's own interface; there is nothing to take over/,
  );
  assert.is(await listening(ctx, 'mesh0'), String(PORT));
});

Take.run();
