// overlay's rules as mesh_overlay: hubs and pinned addresses (MSH61-MSH64), the ssh port (MSH65),
// addresses for named nodes, a full range (MSH60), and the peer graph across sites (O1).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import type postgres from 'postgres';
import { openRoles, closeRoles, refusedWith, enrol, type SqlCtx } from '../helpers.js';

const O = suite<SqlCtx>('overlay rules, as mesh_overlay');
O.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  await enrol(ctx.as, 'hub-a', { site: 'a', dialable: 'hub-a.example.net:51820' });
  await enrol(ctx.as, 'hub-b', { site: 'b', dialable: 'hub-b.example.net:51820' });
  await enrol(ctx.as, 'a1', { site: 'a' });
  await enrol(ctx.as, 'b1', { site: 'b' });
  await enrol(ctx.as, 'b2', { site: 'b' });
  await ctx.as.overlay`select overlay.allocate_addresses()`;
});
O.after(async (ctx) => {
  await closeRoles(ctx);
});

const hub = (ctx: SqlCtx, n: string, on = true) =>
  ctx.as.overlay`select overlay.set_hub(node_name => ${n}::text, on_off => ${on}::boolean)`;
const pin = (ctx: SqlCtx, n: string, a: string) =>
  ctx.as.overlay`select overlay.set_address(node_name => ${n}::text, wanted => ${a}::inet)`;

O('a hub must be an enrolled node (MSH61) that something can dial (MSH62)', async (ctx) => {
  await refusedWith(hub(ctx, 'nobody'), 'MSH61');
  await refusedWith(hub(ctx, 'a1'), 'MSH62');
  assert.is((await ctx.as.overlay`select count(*)::int as n from overlay.hub`)[0]!.n, 0);
});

O(
  "a pinned address is an enrolled node's (MSH61), a host address in the range (MSH63), and nobody else's (MSH64)",
  async (ctx) => {
    await refusedWith(pin(ctx, 'nobody', '10.99.7.7'), 'MSH61');
    for (const a of ['10.98.0.5', '10.99.0.0', '10.99.255.255']) await refusedWith(pin(ctx, 'b2', a), 'MSH63');
    const [taken] = await ctx.as.overlay`select host(address) as a from overlay.address where node = 'a1'`;
    await refusedWith(pin(ctx, 'b2', taken!.a), 'MSH64');
    await pin(ctx, 'b2', '10.99.7.7');
  },
);

O('the ssh port every firewall keeps open is a port (MSH65), whatever the CLI checked first', async (ctx) => {
  for (const p of [0, 65536, -22]) await refusedWith(ctx.as.overlay`select overlay.set_ssh_port(${p}::int)`, 'MSH65');
  const [r] = await ctx.as.overlay`select overlay.set_ssh_port(2222::int) as p`;
  assert.is(r!.p, 2222);
  await ctx.as.overlay`select overlay.set_ssh_port(22::int)`;
});

O('O1, O4: with several hubs, each spoke peers with one, by its address block, and routes through it', async (ctx) => {
  await hub(ctx, 'hub-a');
  await hub(ctx, 'hub-b');
  // /20 blocks 0, 1 and 3: hub-a's group, hub-b's, hub-b's.
  await pin(ctx, 'b1', '10.99.16.7');
  await pin(ctx, 'b2', '10.99.48.7');
  const routes = await ctx.as.overlay`select node, peer, allowed_ips from overlay.peering where route order by node`;
  assert.equal(
    routes.map((r) => [r.node, r.peer, r.allowed_ips]),
    [
      ['a1', 'hub-a', ['10.99.0.0/16']],
      ['b1', 'hub-b', ['10.99.0.0/16']],
      ['b2', 'hub-b', ['10.99.0.0/16']],
    ],
  );
  const b1 = await ctx.as.overlay`select peer, route, keepalive from overlay.peering where node = 'b1' order by peer`;
  assert.equal(
    b1.map((p) => [p.peer, p.route]),
    [['hub-b', true]],
    'its own hub alone; never the other spoke behind NAT',
  );
  assert.ok(
    b1.every((p) => p.keepalive === 25),
    'a spoke behind NAT keeps its paths open',
  );
  const dup = await ctx.as
    .overlay`select node, public_key from overlay.peering group by node, public_key having count(*) > 1`;
  assert.is(dup.length, 0, 'a key appears once in any peer list');
});

/** The hop a packet for DEST takes from NODE: the peer whose allowed IPs hold it most specifically (WireGuard's rule). */
function hop(peering: postgres.Row[], node: string, dest: string): postgres.Row | undefined {
  const ip = (a: string) => a.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  let best: postgres.Row | undefined,
    len = -1;
  for (const p of peering.filter((r) => r.node === node))
    for (const c of p.allowed_ips as string[]) {
      const [a, l] = c.split('/');
      const bits = Number(l);
      const span = 2 ** (32 - bits);
      if (Math.floor(ip(dest) / span) === Math.floor(ip(a!) / span) && bits > len) [best, len] = [p, bits];
    }
  return best;
}

/** Every member reaches every other: each hop has a peer for the destination, and each receiver accepts the source. */
async function everyoneReachesEveryone(ctx: SqlCtx): Promise<void> {
  const peering = await ctx.as.overlay`select node, peer, allowed_ips from overlay.peering`;
  const members = await ctx.as.overlay`select name, host(address) as address from overlay.member`;
  const addr = new Map(members.map((m) => [m.name as string, m.address as string]));
  for (const x of members)
    for (const y of members) {
      if (x.name === y.name) continue;
      let at = x.name as string;
      for (let hops = 0; at !== y.name; hops++) {
        assert.ok(hops < 3, `${x.name} to ${y.name}: more than two hubs between them`);
        const p = hop(peering, at, y.address as string);
        assert.ok(p, `${at} has no peer for ${y.name} (${y.address}), on the way from ${x.name}`);
        const back = hop(peering, p.peer as string, x.address as string);
        assert.is(back?.peer, at, `${p.peer} does not take ${x.name}'s packets from ${at}`);
        at = p.peer as string;
      }
      assert.ok(addr.has(at));
    }
}

O(
  "O4: a hub holds its group's spokes alone (MSHT1 past hub_spokes), hubs carry each other's blocks, and everyone reaches everyone",
  async (ctx) => {
    await everyoneReachesEveryone(ctx);
    // b2 into block 2, hub-a's group, at hub-b's site: hub-b must not hold it, as a site peer or otherwise.
    await pin(ctx, 'b2', '10.99.32.7');
    // Three spokes, one each at most: three hubs needed, two named.
    await ctx.as.overlay`update overlay.settings set hub_spokes = 1`;
    await refusedWith(ctx.as.overlay`select overlay.check_hub_capacity()`, 'MSHT1');
    // Only a hub's declaration grows with the spokes: a declare composing spokes alone checks nothing.
    assert.is((await ctx.as.overlay`select overlay.check_hub_capacity(array['a1', 'b2']) as g`)[0]!.g, 2);
    await refusedWith(ctx.as.overlay`select overlay.check_hub_capacity(array['a1', 'hub-b'])`, 'MSHT1');
    await ctx.as.overlay`update overlay.settings set hub_spokes = 2`;
    assert.is((await ctx.as.overlay`select overlay.check_hub_capacity() as g`)[0]!.g, 2);
    const lists = await ctx.as.overlay`select node, peer, allowed_ips from overlay.peering order by node, peer`;
    const at = Object.fromEntries(
      (await ctx.as.overlay`select name, host(address) as a from overlay.member`).map((r) => [r.name, r.a]),
    );
    assert.equal(
      lists.map((r) => [r.node, r.peer, r.allowed_ips]),
      [
        ['a1', 'hub-a', ['10.99.0.0/16']],
        ['b1', 'hub-b', ['10.99.0.0/16']],
        ['b2', 'hub-a', ['10.99.0.0/16']],
        ['hub-a', 'a1', [`${at['a1']}/32`]],
        ['hub-a', 'b2', ['10.99.32.7/32']],
        ['hub-a', 'hub-b', [`${at['hub-b']}/32`, '10.99.16.0/20']],
        ['hub-b', 'b1', ['10.99.16.7/32']],
        ['hub-b', 'hub-a', [`${at['hub-a']}/32`, '10.99.0.0/20', '10.99.32.0/20']],
      ],
      "a spoke peers with its group's hub alone; each hub with its group's spokes and the other hub, whose entry carries that group's blocks",
    );
    await everyoneReachesEveryone(ctx);
    await ctx.as.overlay`update overlay.settings set hub_spokes = default`;
  },
);

O("addresses for the named nodes alone; the fleet's call also releases a forgotten node's address", async (ctx) => {
  await enrol(ctx.as, 'c1', { site: 'c' });
  await enrol(ctx.as, 'c2', { site: 'c' });
  const held = async () =>
    (await ctx.as.overlay`select node from overlay.address order by node`).map((r) => r.node as string);
  assert.is((await ctx.as.overlay`select overlay.allocate_addresses(array['c1', 'nobody']) as n`)[0]!.n, 1);
  assert.equal(await held(), ['a1', 'b1', 'b2', 'c1', 'hub-a', 'hub-b'], 'c2 was not named: no address');
  await ctx.as.inventory`select inventory.retire_node('c1')`;
  assert.is((await ctx.as.overlay`select overlay.allocate_addresses(array['c2']) as n`)[0]!.n, 1);
  assert.equal(
    await held(),
    ['a1', 'b1', 'b2', 'c1', 'c2', 'hub-a', 'hub-b'],
    "c2 addressed; a named call leaves a forgotten node's address",
  );
  assert.is((await ctx.as.overlay`select overlay.allocate_addresses() as n`)[0]!.n, 0);
  assert.equal(await held(), ['a1', 'b1', 'b2', 'c2', 'hub-a', 'hub-b'], "the fleet's call released c1's");
  await ctx.as.inventory`select inventory.retire_node('c2')`;
  await ctx.as.overlay`select overlay.allocate_addresses()`;
});

O('a range with no free address left is refused (MSH60) and nothing is allocated', async (ctx) => {
  await ctx.as.overlay`update overlay.settings set network = '10.98.0.0/30'`;
  await ctx.as.overlay`delete from overlay.address`;
  await refusedWith(ctx.as.overlay`select overlay.allocate_addresses()`, 'MSH60');
  assert.is((await ctx.as.overlay`select count(*)::int as n from overlay.address`)[0]!.n, 0);
});

O.run();
