// Hubs divide a large fleet (O4), applied by real hosts: two hub machines and
// one spoke machine for each, real mesh-host processes in network namespaces
// on real wireguard-go, and a fleet of spokes made in SQL (MESH_TEST_HUB_NODES,
// 600 by default; the peer count a hub holds is what this tests, and a hub
// of 100,000 nodes holds 50,000). Each hub's declaration is verified and
// applied by its host, and its live interface holds every peer declared; the
// two hubs hold every spoke between them, each once; a spoke of one hub
// reaches a spoke of the other through both hubs; and when a hub stops, the
// pings among the machines left are what `mesh overlay what-if` said (Q2).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import type { Lab } from '../../lab/netns/topology.js';
import { labFor, machines, pings, appliedNewest, type Machine } from './machines.js';

const PORT = 51820;
const IF = 'mesh0';
const FLEET = Number(process.env.MESH_TEST_HUB_NODES ?? 600);
// wg-quick asks `ip route` once for each allowed IP of a new interface: a hub's apply grows with its share.
const SPREAD = Math.min(64, Math.floor(600_000 / FLEET));
const PATIENCE = 120_000 + FLEET * 100;

interface Ctx {
  mesh: Mesh;
  lab: Lab;
  procs: Proc[];
  m: Record<string, Machine>;
  runs: Record<string, Proc>;
}
const Hubs = suite<Ctx>('hubs divide the spokes, applied by real hosts (O4)');

Hubs.before(async (ctx) => {
  ctx.procs = [];
  ctx.m = {};
  ctx.runs = {};
  ctx.mesh = await freshMesh();
  ctx.lab = await labFor(ctx.mesh, {
    sites: [
      { name: 'a', machines: ['hub1', 's1'], forwards: [{ udp: PORT, to: 'hub1' }] },
      { name: 'b', machines: ['hub2', 's2'], forwards: [{ udp: PORT, to: 'hub2' }] },
    ],
  });
  // A range for 100,000 nodes and more (a /16 holds 65,534).
  await ctx.mesh.store.admin`update overlay.settings set network = '10.64.0.0/12'`;
  await ctx.mesh.serve();
});

Hubs.after(async (ctx) => {
  await Promise.allSettled(ctx.procs.map((p) => p.stop()));
  await ctx.lab?.down();
  await ctx.mesh?.stop();
  for (const m of Object.values(ctx.m)) rmSync(m.dir, { recursive: true, force: true });
});

async function cli(ctx: Ctx, ...args: string[]): Promise<string> {
  const r = await ctx.mesh.cli(args);
  if (r.code !== 0) throw new Error(`mesh ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

async function join(ctx: Ctx, name: string, site: string, dialable?: string): Promise<void> {
  const token = await ctx.mesh.token(name, ['--site', site, ...(dialable ? ['--dialable', dialable] : [])]);
  const m = (ctx.m[name] = machines(ctx.lab, ctx.procs)(name));
  const r = await m.host(['enrol'], token);
  if (r.code !== 0) throw new Error(`enrol ${name} inside its namespace failed: ${r.stderr}`);
  ctx.runs[name] = m.run();
  await ctx.runs[name]!.waitFor(/connected to /, 120_000);
}

/** Until NAME applied its newest declaration, with nothing failing (the host verified it first, D1). */
async function appliedClean(ctx: Ctx, name: string): Promise<void> {
  const proc = ctx.runs[name]!;
  const serial = await appliedNewest(ctx.mesh, proc, name, PATIENCE).catch((err: Error) => {
    throw new Error(`${err.message}; ${name} said:\n${proc.output().slice(-3000)}`);
  });
  const [line] = await proc.waitFor(new RegExp(`applied declaration ${serial}:[^\\n]*`), PATIENCE);
  assert.match(line, / 0 failed/, `${name}: ${line}`);
}

/** The peer keys of NAME's newest declaration, as SQL recorded the signed bytes. */
async function declaredPeers(ctx: Ctx, name: string): Promise<string[]> {
  const [d] = await ctx.mesh.store.admin`select convert_from(envelope, 'utf8') as e from assignment.declaration
                                          where node = ${name} order by serial desc limit 1`;
  const body = JSON.parse((JSON.parse(d!.e as string) as { body: string }).body) as {
    resources: { kind: string; peers?: { publicKey: string }[] }[];
  };
  return body.resources.find((r) => r.kind === 'wireguard')!.peers!.map((p) => p.publicKey);
}

Hubs('two hubs and a spoke for each enrol; the fleet is made in SQL; too few hubs are refused (MSHT1)', async (ctx) => {
  await Promise.all([
    join(ctx, 'hub1', 'a', `${ctx.lab.publicAddress('a')}:${PORT}`),
    join(ctx, 'hub2', 'b', `${ctx.lab.publicAddress('b')}:${PORT}`),
    join(ctx, 's1', 'a'),
    join(ctx, 's2', 'b'),
  ]);
  // s1 in /20 block 0 (hub1's group), s2 in block 1 (hub2's): each reaches the other only through both hubs.
  await cli(ctx, 'overlay', 'address', 's2', '10.64.16.250');
  await cli(ctx, 'overlay', 'hub', 'hub1');
  await cli(ctx, 'overlay', 'hub', 'hub2');
  // Spokes nothing dials, at a site of their own: each peers with its hub alone.
  await ctx.mesh.store.admin`
    insert into inventory.node (name, site, dialable, identity_key, overlay_key, sealing_key, enrolled_at)
    select 'q' || lpad(i::text, 6, '0'), 'c', null, k, k, k, now()
      from generate_series(1, ${FLEET}::int) i,
           lateral (select decode(md5(i::text) || md5('k' || i), 'hex') as k) x`;
  // Their addresses apart (64 at most, within the /12), over several /20 blocks, so both hubs hold a share (a fleet fills blocks in order).
  await ctx.mesh.store.admin`insert into overlay.address (node, address)
                             select 'q' || lpad(i::text, 6, '0'), '10.64.0.0'::inet + 1000 + i * ${SPREAD}::int from generate_series(1, ${FLEET}::int) i`;
  // A third of the spokes a hub at most: three hubs needed, two named.
  await ctx.mesh.store.admin`update overlay.settings set hub_spokes = ${Math.ceil((FLEET + 2) / 3)}::int`;
  const r = await ctx.mesh.cli(['declare', 'hub1']);
  assert.is.not(r.code, 0, 'declare with too few hubs is refused');
  assert.match(r.stderr, /need at least 3 hubs.*\(MSHT1\)/s);
  await ctx.mesh.store.admin`update overlay.settings set hub_spokes = default`;
  for (const n of ['hub1', 'hub2', 's1', 's2']) await cli(ctx, 'declare', n);
  for (const n of ['hub1', 'hub2', 's1', 's2']) await appliedClean(ctx, n);
});

Hubs(
  "each hub's live interface holds every peer its declaration names; together they hold every spoke once",
  async (ctx) => {
    const spokes = new Set(
      (await ctx.mesh.store.admin`select public_key from overlay.member where not hub`).map(
        (r) => r.public_key as string,
      ),
    );
    const [h1, h2] = await Promise.all(['hub1', 'hub2'].map((h) => declaredPeers(ctx, h)));
    for (const [hub, declared] of [
      ['hub1', h1!],
      ['hub2', h2!],
    ] as const) {
      const live = (await ctx.lab.exec(hub, ['/usr/bin/wg', 'show', IF, 'peers'])).split('\n').filter(Boolean);
      assert.is(live.length, declared.length, `${hub}: ${live.length} peers live, ${declared.length} declared`);
      assert.equal(live.sort(), [...declared].sort(), `${hub}: the live peers are the declared ones`);
      assert.ok(declared.length < spokes.size, `${hub} holds a share, not the fleet (${declared.length})`);
    }
    const held = [...h1!, ...h2!].filter((k) => spokes.has(k));
    assert.is(held.length, spokes.size, 'every spoke is held, by one hub');
    assert.is(new Set(held).size, spokes.size);
  },
);

Hubs('a spoke of one hub reaches a spoke of the other, through both hubs', async (ctx) => {
  const addr = Object.fromEntries(
    (await ctx.mesh.store.admin`select name, host(address) as a from overlay.member where name in ('s1', 's2')`).map(
      (r) => [r.name as string, r.a as string],
    ),
  );
  const failed: string[] = [];
  for (const [from, to] of [
    ['s1', 's2'],
    ['s2', 's1'],
  ] as const)
    if (!(await pings(ctx.lab, from, addr[to]!))) failed.push(`${from}->${to}`);
  assert.equal(failed, [], `paths that did not ping: ${failed.join(', ')}`);
});

Hubs(
  'Q2: with hub2 stopped, the pings among the machines left are what what-if --down hub2 said, pair for pair',
  async (ctx) => {
    const left = ['hub1', 's1', 's2'];
    const addr = Object.fromEntries(
      (await ctx.mesh.store.admin`select name, host(address) as a from overlay.member where name = any(${left})`).map(
        (r) => [r.name as string, r.a as string],
      ),
    );
    const pairs = left.flatMap((a) => left.filter((b) => b !== a).map((b) => [a, b] as const));
    const matrix = async (tries: number) =>
      new Set(
        (
          await Promise.all(
            pairs.map(async ([a, b]) => ((await pings(ctx.lab, a, addr[b]!, tries)) ? `${a}>${b}` : '')),
          )
        ).filter(Boolean),
      );
    // Q2 is asked of the machines: every pair a fleet of 100,000 made in SQL loses with a hub is 5·10^9
    // rows, so above 10,000 the made spokes go first (the live interfaces keep them; no ping needs them).
    if (FLEET > 10_000) {
      await ctx.mesh.store.admin`delete from overlay.address where node like 'q%'`;
      await ctx.mesh.store.admin`delete from inventory.node where name like 'q%'`;
    }
    const before = await matrix(5);
    assert.is(before.size, pairs.length, `before hub2 stops every pair pings; these do: ${[...before].join(', ')}`);

    // As an operator asks it; the fleet's spokes lose their pairs too, so every pair is listed and those here kept.
    const w = JSON.parse(await cli(ctx, 'overlay', 'what-if', '--down', 'hub2', '--limit', '0', '--json')) as {
      pairs: { node: string; peer: string }[];
      pairsTotal: number;
    };
    assert.is(w.pairs.length, w.pairsTotal, 'every lost pair listed');
    const lost = new Set(
      w.pairs.filter((p) => left.includes(p.node) && left.includes(p.peer)).map((p) => `${p.node}>${p.peer}`),
    );
    // The prediction must say something both ways: s2 (hub2's group) cut off, hub1 and s1 (hub1's) kept.
    assert.ok(lost.size > 0 && lost.size < pairs.length, `what-if predicts ${[...lost].join(', ')}`);

    // hub2 stops: its host, and its interface (wireguard-go's, which outlives the host) with it.
    await ctx.runs.hub2!.stop();
    await ctx.lab.execAny('hub2', ['/usr/sbin/ip', 'link', 'delete', 'dev', IF]);
    const gone = await ctx.lab.execAny('hub2', ['/usr/sbin/ip', 'link', 'show', 'dev', IF]);
    assert.is.not(gone.code, 0, `hub2's ${IF} is still there: ${gone.stdout}`);
    const after = await matrix(3);
    const wrong = pairs
      .map(([a, b]) => `${a}>${b}`)
      .filter((p) => after.has(p) === lost.has(p))
      .map((p) => `${p} ${after.has(p) ? 'pings' : 'does not ping'}, predicted ${lost.has(p) ? 'lost' : 'kept'}`);
    assert.equal(wrong, [], `the pings differ from what-if --down hub2: ${wrong.join('; ')}`);
  },
);

Hubs.run();
