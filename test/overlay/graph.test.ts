// The peer graph in SQL (O1): who peers with whom, with which allowed IPs,
// endpoints and keepalives, and which nodes a join sends new declarations to.
// Nodes are recorded directly as enrolment leaves them (no broker account or
// queue: declare records their declarations and says it could not send them).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { cli } from '../declare/helpers.js';
import { recordNode } from './fleet.js';
import { parseResources } from '../../src/wire/parse_resources.js';
import type { WireguardResource, WireguardPeer } from '../../src/wire/resources.js';

interface Ctx {
  mesh: Mesh;
  keys: Record<string, string>;
}
const Graph = suite<Ctx>('overlay graph in SQL (O1)');

Graph.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.keys = {};
});
Graph.after(async (ctx) => {
  await ctx.mesh.stop();
});

/** A node as spend_token leaves it. */
async function node(ctx: Ctx, name: string, site: string, dialable?: string): Promise<void> {
  ctx.keys[name] = (await recordNode(ctx.mesh, name, site, dialable)).toString('base64');
}

/** Nodes `mesh declare` composed and recorded (sent or not: these nodes have no queue). */
async function declared(ctx: Ctx, ...args: string[]): Promise<string[]> {
  const r = await ctx.mesh.cli(['declare', '--all', ...args, '--json']);
  if (r.code !== 0 && r.code !== 3) throw new Error(`mesh declare failed (${r.code}): ${r.stderr}`);
  return (JSON.parse(r.stdout) as { node: string }[]).map((d) => d.node).sort();
}

/** Every node's wireguard resource as its next declaration carries it (assignment.compose: what plan and declare read), parsed as a host would; one round trip. */
async function graph(ctx: Ctx): Promise<Record<string, WireguardResource | undefined>> {
  await ctx.mesh.store.admin`select overlay.allocate_addresses()`;
  const rows = await ctx.mesh.store
    .admin`select name, assignment.compose(name) as resources from inventory.enrolled_node`;
  return Object.fromEntries(
    rows.map((r) => [
      r.name,
      parseResources(r.resources).find((x) => x.kind === 'wireguard') as WireguardResource | undefined,
    ]),
  );
}

const keyName = (ctx: Ctx, key: string) => Object.entries(ctx.keys).find(([, k]) => k === key)?.[0] ?? `?${key}`;
function peersOf(ctx: Ctx, g: Record<string, WireguardResource | undefined>, name: string): Map<string, WireguardPeer> {
  const r = g[name];
  assert.ok(r, `${name} has an interface`);
  return new Map(r!.peers.map((p) => [keyName(ctx, p.publicKey), p] as [string, WireguardPeer]));
}

Graph('a node alone has no interface: nothing to tunnel to', async (ctx) => {
  await node(ctx, 'hub', 'a', 'hub.example.net:51820');
  assert.is((await graph(ctx)).hub, undefined);
});

Graph('a hub must be dialable; the refusal names the remedy', async (ctx) => {
  await node(ctx, 'a1', 'a');
  const r = await ctx.mesh.cli(['overlay', 'hub', 'a1']);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /cannot be a hub.*--dialable.*\(MSH62\)/);
  await cli(ctx.mesh, 'overlay', 'hub', 'hub');
});

Graph(
  'O1: a hub sharing a site with a spoke appears once in its list, carrying the range, with keepalive',
  async (ctx) => {
    // a1 and hub are at one site and hub is dialable: a direct peer AND its route hub.
    const g = await graph(ctx);
    const a1 = peersOf(ctx, g, 'a1');
    assert.equal([...a1.keys()], ['hub']);
    const h = a1.get('hub')!;
    assert.equal(h.allowedIps, ['10.99.0.0/16']);
    assert.is(h.endpoint, 'hub.example.net:51820');
    assert.is(h.keepalive, 25);
    const hub = g.hub;
    assert.is(hub!.hub, true);
    assert.is(hub!.listenPort, 51820);
    assert.equal(
      hub!.peers.map((p) => keyName(ctx, p.publicKey)),
      ['a1'],
    );
    assert.equal(hub!.peers[0]!.allowedIps, [`${g.a1!.address.split('/')[0]}/32`]);
    // What `mesh plan` shows is the same resource, and a host's parser takes it.
    const planned = parseResources(JSON.parse(await cli(ctx.mesh, 'plan', 'hub', '--json')).resources);
    assert.equal(
      planned.find((r) => r.kind === 'wireguard'),
      hub,
    );
  },
);

Graph('O1: two nodes at one site that neither can be dialled route through the hub, not to each other', async (ctx) => {
  await node(ctx, 'b1', 'b');
  await node(ctx, 'b2', 'b');
  const g = await graph(ctx);
  for (const [me, other] of [
    ['b1', 'b2'],
    ['b2', 'b1'],
  ]) {
    const p = peersOf(ctx, g, me!);
    assert.not.ok(p.has(other!), `${me} does not peer with ${other}`);
    assert.equal([...p.keys()], ['hub']);
    assert.equal(p.get('hub')!.allowedIps, ['10.99.0.0/16'], `${me} reaches ${other} through the hub's range`);
  }
  const hub = peersOf(ctx, g, 'hub');
  assert.equal([...hub.keys()].sort(), ['a1', 'b1', 'b2']);
});

Graph(
  'O1: at a site where one end can be dialled, the two peer directly with /32s; the range still goes to the hub',
  async (ctx) => {
    await node(ctx, 'c1', 'c', 'c1.example.net:51820');
    await node(ctx, 'c2', 'c');
    const g = await graph(ctx);
    const c2 = peersOf(ctx, g, 'c2');
    assert.equal([...c2.keys()].sort(), ['c1', 'hub']);
    const c1addr = g.c1!.address.split('/')[0];
    assert.equal(c2.get('c1')!.allowedIps, [`${c1addr}/32`]);
    assert.is(c2.get('c1')!.endpoint, 'c1.example.net:51820');
    assert.equal(c2.get('hub')!.allowedIps, ['10.99.0.0/16']);
    const c1 = peersOf(ctx, g, 'c1');
    assert.equal([...c1.keys()].sort(), ['c2', 'hub']);
    assert.is(c1.get('c2')!.endpoint, undefined, 'c2 cannot be dialled: no endpoint');
    assert.is(g.c1!.listenPort, 51820, 'a dialable node listens');
    assert.is(g.c2!.listenPort, undefined, 'a node behind NAT has no fixed port');
  },
);

Graph('O1: keepalive on every entry of a node behind NAT, and on no entry of a dialable node or hub', async (ctx) => {
  const g = await graph(ctx);
  for (const n of ['a1', 'b1', 'b2', 'c2']) {
    for (const [peer, p] of peersOf(ctx, g, n)) assert.is(p.keepalive, 25, `${n} -> ${peer} keeps alive`);
  }
  for (const n of ['hub', 'c1']) {
    const peers = peersOf(ctx, g, n);
    assert.ok(peers.size >= 2, `${n} has peers to look at`);
    for (const [peer, p] of peers) assert.is(p.keepalive, undefined, `${n} -> ${peer} does not keep alive`);
  }
});

Graph('O1: no key appears twice in any peer list, and no node lists itself', async (ctx) => {
  const g = await graph(ctx);
  for (const n of Object.keys(ctx.keys)) {
    const r = g[n];
    const keys = r!.peers.map((p) => p.publicKey);
    assert.is(new Set(keys).size, keys.length, `${n}'s list`);
    assert.not.ok(keys.includes(ctx.keys[n]!), `${n} lists itself`);
  }
});

Graph('addresses are unique, kept across declarations, and released only when the node is retired', async (ctx) => {
  const rows = await ctx.mesh.store.admin`select node, host(address) as a from overlay.address order by address`;
  assert.is(rows.length, Object.keys(ctx.keys).length);
  assert.is(new Set(rows.map((r) => r.a)).size, rows.length);
  assert.equal(rows[0]!.a, '10.99.0.1', 'lowest first');
  const before = Object.fromEntries(rows.map((r) => [r.node, r.a]));
  const b1 = before.b1;
  await ctx.mesh.store.admin`select inventory.retire_node('b1')`;
  delete ctx.keys.b1;
  await node(ctx, 'd1', 'd');
  const addresses = async () =>
    Object.fromEntries(
      (await ctx.mesh.store.admin`select node, host(address) as a from overlay.address`).map((r) => [r.node, r.a]),
    );
  // A declare naming its nodes addresses those alone; one over the fleet addresses d1 and releases b1's.
  const named = await ctx.mesh.cli(['declare', 'a1']);
  assert.ok(named.code === 0 || named.code === 3, named.stderr);
  const between = await addresses();
  assert.is(between.d1, undefined, 'd1 was not named: no address yet');
  assert.is(between.b1, b1, "a named declare leaves the retired node's address");
  await declared(ctx);
  const after = await addresses();
  for (const n of Object.keys(ctx.keys)) if (n !== 'd1') assert.is(after[n], before[n], `${n} keeps its address`);
  assert.is(after.d1, b1, "the retired node's address is free again, and the lowest");
  await ctx.mesh.store.admin`select inventory.retire_node('d1')`;
  delete ctx.keys.d1;
});

Graph(
  'O1: a node joining changes exactly the lists it enters, and declare --all --changed sends exactly those',
  async (ctx) => {
    assert.equal(await declared(ctx), Object.keys(ctx.keys).sort());
    assert.equal(await declared(ctx, '--changed'), [], 'nothing changed, nothing sent');
    const lists = async () => {
      const g = await graph(ctx);
      return Object.fromEntries(Object.keys(ctx.keys).map((n) => [n, JSON.stringify(g[n]?.peers ?? null)]));
    };
    const was = await lists();
    await node(ctx, 'b3', 'b');
    const now = await lists();
    const changed = Object.keys(was)
      .filter((n) => was[n] !== now[n])
      .sort();
    assert.equal(changed, ['hub'], "only the hub's list gains b3 (b1, b2 and b3 cannot dial each other)");
    assert.equal(await declared(ctx, '--changed'), ['b3', 'hub']);
    // A dialable node joining a site is peered directly by its site's nodes.
    await node(ctx, 'c3', 'c', 'c3.example.net:51820');
    assert.equal(await declared(ctx, '--changed'), ['c1', 'c2', 'c3', 'hub']);
  },
);

Graph('show prints the same graph as a table, as JSON and as DOT', async (ctx) => {
  const json = JSON.parse(await cli(ctx.mesh, 'overlay', 'show', '--json'));
  assert.is(json.network, '10.99.0.0/16');
  const c2 = json.nodes.find((n: { name: string }) => n.name === 'c2');
  assert.equal(
    c2.peers.map((p: { peer: string }) => p.peer),
    ['c1', 'c3', 'hub'],
  );
  assert.is(c2.peers.find((p: { peer: string }) => p.peer === 'hub').route, true);
  const dot = await cli(ctx.mesh, 'overlay', 'show', '--dot');
  assert.match(dot, /^graph overlay \{/);
  const edges = dot.split('\n').filter((l) => l.includes(' -- '));
  const pairs = json.nodes.reduce((a: number, n: { peers: unknown[] }) => a + n.peers.length, 0) / 2;
  assert.is(edges.length, pairs, 'one line per peered pair');
  assert.match(dot, /"hub" \[label="hub\\n10\.99\.0\.\d+\\nhub\.example\.net:51820", peripheries=2\]/);
  assert.match(dot, /"b2" -- "hub" \[style="dashed,bold"\]/);
  const text = await cli(ctx.mesh, 'overlay', 'show');
  assert.match(text, /^overlay 10\.99\.0\.0\/16 on mesh0/);
  assert.match(
    text,
    /\bb2\s+b\s+10\.99\.0\.\d+\s+behind nat\s+hub\s+hub\.example\.net:51820\s+10\.99\.0\.0\/16 \(route\)\s+25/,
  );
});

Graph('a pinned address must be free and in the range', async (ctx) => {
  const taken = (await ctx.mesh.store.admin`select host(address) as a from overlay.address where node = 'hub'`)[0]!
    .a as string;
  const r = await ctx.mesh.cli(['overlay', 'address', 'c2', taken]);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /held by node hub.*\(MSH64\)/);
  const out = await ctx.mesh.cli(['overlay', 'address', 'c2', '10.98.0.5']);
  assert.match(out.stderr, /not a host address in the overlay range.*\(MSH63\)/);
  await cli(ctx.mesh, 'overlay', 'address', 'c2', '10.99.7.7');
  assert.is((await graph(ctx)).c2!.address, '10.99.7.7/16');
});

Graph(
  'every interface composes to the bytes jsonb_strip_nulls(jsonb_build_object(...)) printed (overlay 0010 writes the text itself)',
  async (ctx) => {
    // W2 compares digests of these bytes: a composition written another way must be byte for byte what
    // the jsonb of 0008 printed, or every node would be re-declared for nothing. The 0008 object, built here:
    const adm = ctx.mesh.store.admin;
    await adm`select overlay.allocate_addresses()`;
    const rows = await adm`
    with s as (select network, listen_port, interface from overlay.settings)
    select m.name, t.resource as text,
           jsonb_strip_nulls(jsonb_build_object('id', 'wireguard:' || s.interface, 'kind', 'wireguard', 'name', s.interface,
             'address', host(m.address) || '/' || masklen(s.network),
             'listenPort', case when m.dialable is not null then s.listen_port end, 'hub', m.hub,
             'peers', (select jsonb_agg(jsonb_build_object('publicKey', p.public_key, 'endpoint', p.endpoint,
                                        'allowedIps', to_jsonb(p.allowed_ips), 'keepalive', p.keepalive) order by p.public_key)
                         from overlay.peers_of(array[m.name]) p)))::text as jsonb
      from overlay.member m cross join s join overlay.interface_texts_of(null) t on t.node = m.name order by m.name`;
    assert.ok(rows.length >= 6, 'hubs, dialable nodes and nodes behind NAT to compare');
    assert.ok(
      rows.some((r) => String(r.text).includes('"listenPort"')) &&
        rows.some((r) => !String(r.text).includes('"listenPort"')),
    );
    assert.ok(
      rows.some((r) => String(r.text).includes('"endpoint"')) &&
        rows.some((r) => String(r.text).includes('"keepalive"')),
    );
    for (const r of rows) assert.is(r.text, r.jsonb, `${r.name}'s interface`);
    // And what compose_each gives is the resource read back (one definition: interfaces_of is the same text as jsonb).
    const [c] =
      await adm`select count(*)::int as n from overlay.interfaces_of(null) i join overlay.interface_texts_of(null) t using (node) where i.resource::text <> t.resource`;
    assert.is(c!.n, 0);
  },
);

Graph.run();
