// overlay's rules as mesh_overlay: hubs and pinned addresses (MSH61-MSH64), the ssh port (MSH65),
// a full range (MSH60), and the peer graph across sites (O1).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
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

O("O1: with hubs in several sites, a spoke nothing can dial routes through its own site's hub", async (ctx) => {
  await hub(ctx, 'hub-a');
  await hub(ctx, 'hub-b');
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
    [
      ['hub-a', false],
      ['hub-b', true],
    ],
    'every hub, once each; never the other spoke behind NAT',
  );
  assert.ok(
    b1.every((p) => p.keepalive === 25),
    'a spoke behind NAT keeps its paths open',
  );
  const dup = await ctx.as
    .overlay`select node, public_key from overlay.peering group by node, public_key having count(*) > 1`;
  assert.is(dup.length, 0, 'a key appears once in any peer list');
});

O('a range with no free address left is refused (MSH60) and nothing is allocated', async (ctx) => {
  await ctx.as.overlay`update overlay.settings set network = '10.98.0.0/30'`;
  await ctx.as.overlay`delete from overlay.address`;
  await refusedWith(ctx.as.overlay`select overlay.allocate_addresses()`, 'MSH60');
  assert.is((await ctx.as.overlay`select count(*)::int as n from overlay.address`)[0]!.n, 0);
});

O.run();
