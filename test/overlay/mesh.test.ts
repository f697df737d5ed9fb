// The overlay end to end (O1, O2, D4): real mesh-host processes enrol and run
// inside network namespaces, behind NAT, reaching the test's broker through
// the lab's uplink; the mesh computes the graph, declares it, the hosts bring
// it up with real wireguard-go. Three machines on two sites, two of them
// behind no reachable address; then a fourth joins, and the nodes whose peers
// it changes are re-declared with no command typed (W2).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import type { Lab } from '../../lab/netns/topology.js';
import { labFor, machines, enrolInside, pings, appliedNewest as newestApplied, type Machine } from './machines.js';
import { cli, until } from '../declare/helpers.js';

const PORT = 51820;
const IF = 'mesh0';

interface Ctx {
  mesh: Mesh;
  lab: Lab;
  procs: Proc[];
  m: Record<string, Machine>;
  runs: Record<string, Proc>;
  addr: Record<string, string>;
}
const E2E = suite<Ctx>('overlay end to end in namespaces (O1, O2, D4)');

let current: Ctx | undefined;

E2E.before(async (ctx) => {
  current = ctx;
  ctx.procs = [];
  ctx.m = {};
  ctx.runs = {};
  ctx.addr = {};
  ctx.mesh = await freshMesh();
  ctx.lab = await labFor(ctx.mesh, {
    sites: [
      { name: 'a', machines: ['hub', 'a1'], forwards: [{ udp: PORT, to: 'hub' }] },
      { name: 'b', machines: ['b1', 'b2'] },
    ],
  });
  await ctx.mesh.serve();
  // Another tenant (Docker) left FORWARD at DROP on the hub (O2).
  await ctx.lab.exec('hub', ['/usr/sbin/iptables', '-w', '-P', 'FORWARD', 'DROP']);
});

async function teardown(ctx: Ctx): Promise<void> {
  await Promise.allSettled(ctx.procs.map((p) => p.stop()));
  await ctx.lab?.down();
  await ctx.mesh?.stop();
  for (const m of Object.values(ctx.m)) rmSync(m.dir, { recursive: true, force: true });
}
E2E.after(teardown);

/** Issue a token, enrol inside the machine (over NAT), start its host. */
async function join(ctx: Ctx, name: string, site: string, dialable?: string): Promise<void> {
  const m = (ctx.m[name] = machines(ctx.lab, ctx.procs)(name));
  ctx.runs[name] = await enrolInside(ctx.mesh, m, ['--site', site, ...(dialable ? ['--dialable', dialable] : [])]);
}

async function applied(ctx: Ctx, name: string, serial: number): Promise<void> {
  const [line] = await ctx.runs[name]!.waitFor(new RegExp(`applied declaration ${serial}:[^\\n]*`), 120_000);
  assert.match(line, / 0 failed/, `${name}: ${line}`);
}

/** Each node's newest serial in SQL: what it is owed. */
async function newest(ctx: Ctx): Promise<Record<string, number>> {
  const rows = await ctx.mesh.store
    .admin`select node, max(serial)::int as serial from assignment.declaration group by node`;
  return Object.fromEntries(rows.map((r) => [r.node as string, r.serial as number]));
}

/** Until NAME applied its newest declaration, with nothing failing. */
async function appliedNewest(ctx: Ctx, name: string): Promise<void> {
  await applied(ctx, name, await newestApplied(ctx.mesh, ctx.runs[name]!, name));
}

async function addresses(ctx: Ctx): Promise<void> {
  const g = JSON.parse(await cli(ctx.mesh, 'overlay', 'show', '--json')) as {
    nodes: { name: string; address: string }[];
  };
  for (const n of g.nodes) ctx.addr[n.name] = n.address;
}

const ifindex = async (ctx: Ctx, m: string) =>
  (await ctx.lab.exec(m, ['/usr/sbin/ip', '-o', 'link', 'show', 'dev', IF])).split(':')[0];

E2E(
  'three machines enrol from behind NAT; the hub is named; declarations are applied by the real hosts',
  async (ctx) => {
    await Promise.all([
      join(ctx, 'hub', 'a', `${ctx.lab.publicAddress('a')}:${PORT}`),
      join(ctx, 'a1', 'a'),
      join(ctx, 'b1', 'b'),
    ]);
    // The command itself owes every node whose peers changed a declaration (W2): nothing else typed.
    const out = JSON.parse(await cli(ctx.mesh, 'overlay', 'hub', 'hub', '--json')) as {
      redeclared: { node: string }[];
    };
    assert.equal(out.redeclared.map((d) => d.node).sort(), ['a1', 'b1', 'hub']);
    await Promise.all(['hub', 'a1', 'b1'].map((n) => appliedNewest(ctx, n)));
    await addresses(ctx);
  },
);

E2E(
  'O1/O2: all nine paths ping over the overlay, spoke to spoke through a hub whose FORWARD policy is DROP',
  async (ctx) => {
    const failed: string[] = [];
    for (const from of ['a1', 'b1', 'hub']) {
      for (const to of ['hub', 'a1', 'b1']) {
        if (!(await pings(ctx.lab, from, ctx.addr[to]!))) failed.push(`${from}->${to}`);
      }
    }
    assert.equal(failed, [], `paths that did not ping: ${failed.join(', ')}`);
    const fwd = await ctx.lab.exec('hub', ['/usr/sbin/iptables', '-w', '-S', 'FORWARD']);
    assert.match(fwd, /^-P FORWARD DROP$/m, "the other tenant's policy is left alone");
    assert.is(
      fwd.split('\n').filter((l) => l.includes(`mesh:${IF}`) && l.startsWith('-A FORWARD')).length,
      1,
      'the hub holds its one accept rule, overlay in and overlay out',
    );
    // The spokes' files carry keepalive; the hub's none (O1).
    assert.match(
      await ctx.lab.exec('b1', ['/usr/bin/cat', `/etc/wireguard/${IF}.conf`]),
      /^PersistentKeepalive = 25$/m,
    );
    assert.not.match(await ctx.lab.exec('hub', ['/usr/bin/cat', `/etc/wireguard/${IF}.conf`]), /PersistentKeepalive/);
  },
);

E2E(
  'a fourth node joins: exactly the lists it enters are declared again, and the running hub picks it up in place',
  async (ctx) => {
    const before = await ifindex(ctx, 'hub');
    const mark = ctx.runs.hub!.output().length;
    const was = await newest(ctx);
    await join(ctx, 'b2', 'b');
    // No command typed: serve's enrolment owes the nodes it changed their declarations (W2).
    const [k] = await ctx.mesh.store
      .admin`select encode(overlay_key, 'base64') as key from inventory.node where name = 'b2'`;
    await until(
      'the hub is owed a declaration that peers with b2',
      async () =>
        (
          await ctx.mesh.store
            .admin`select 1 from assignment.declaration where node = 'hub' and serial > ${was.hub!} and position(${k!.key as string} in convert_from(envelope, 'utf8')) > 0`
        ).length > 0,
    );
    const now = await newest(ctx);
    // b2 cannot dial b1 nor b1 b2: they meet through the hub, so only the hub's list changes.
    assert.equal(
      Object.keys(now)
        .filter((n) => now[n] !== was[n])
        .sort(),
      ['b2', 'hub'],
    );
    await Promise.all([applied(ctx, 'hub', now.hub!), applied(ctx, 'b2', now.b2!)]);
    await addresses(ctx);
    await ctx.runs.hub!.waitFor(/wireguard mesh0: updated in place/, 30_000, mark);
    assert.is(await ifindex(ctx, 'hub'), before, "the hub's interface was not restarted");
    const failed: string[] = [];
    for (const [from, to] of [
      ['b2', 'hub'],
      ['hub', 'b2'],
      ['a1', 'b2'],
      ['b2', 'a1'],
      ['b1', 'b2'],
      ['b2', 'b1'],
      ['a1', 'b1'],
    ] as const) {
      if (!(await pings(ctx.lab, from, ctx.addr[to]!))) failed.push(`${from}->${to}`);
    }
    assert.equal(failed, [], `paths that did not ping after b2 joined: ${failed.join(', ')}`);
  },
);

E2E(
  'a spoke updated in place keeps its port: its hub reaches it at once, not after its next keepalive',
  async (ctx) => {
    // A spoke behind NAT is known to its hub by the NAT's mapping of its port;
    // a new port is a new mapping the hub learns only when the spoke next speaks.
    const port = async () => (await ctx.lab.exec('a1', ['/usr/bin/wg', 'show', IF, 'listen-port'])).trim();
    const before = await port();
    const mark = ctx.runs.a1!.output().length;
    const declare = async () => {
      await cli(ctx.mesh, 'declare', 'a1');
      await appliedNewest(ctx, 'a1');
    };
    await ctx.mesh.store.admin`update overlay.settings set keepalive = 50`;
    await declare();
    await ctx.runs.a1!.waitFor(/wireguard mesh0: updated in place/, 30_000, mark);
    assert.is(await port(), before, "a1's listen port");
    assert.ok(await pings(ctx.lab, 'hub', ctx.addr.a1!, 2), 'hub -> a1 right after the update');
    await ctx.mesh.store.admin`update overlay.settings set keepalive = default`;
    await declare();
  },
);

E2E("O2: a hub made a spoke again takes its FORWARD rules away, leaving the other tenant's policy", async (ctx) => {
  const out = JSON.parse(await cli(ctx.mesh, 'overlay', 'hub', 'hub', '--off', '--json')) as {
    redeclared: { node: string }[];
  };
  assert.ok(
    out.redeclared.some((d) => d.node === 'hub'),
    `the hub is told: ${JSON.stringify(out.redeclared)}`,
  );
  await appliedNewest(ctx, 'hub');
  const fwd = await ctx.lab.exec('hub', ['/usr/sbin/iptables', '-w', '-S', 'FORWARD']);
  assert.is(fwd.split('\n').filter((l) => l.includes(`mesh:${IF}`)).length, 0, 'no rule of ours is left');
  assert.match(fwd, /^-P FORWARD DROP$/m);
});

for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    void (current ? teardown(current) : Promise.resolve()).finally(() => process.exit(130));
  });
}

E2E.run();
