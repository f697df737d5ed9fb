// assignment's rules as mesh_assignment: an assignment names a module the
// catalogue has (MSH20) and an enrolled node (MSH21); serials only go forward (D2).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, refusedWith, enrol, putModule, type SqlCtx } from '../helpers.js';

const A = suite<SqlCtx>('assignment rules, as mesh_assignment');
A.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  await putModule(ctx.as, 'web');
  await enrol(ctx.as, 'web1');
  await ctx.as.inventory`select inventory.issue_token(node_name => 'waiting', token_hash => ${Buffer.alloc(32, 7)}::bytea, node_site => null, node_dialable => null, ttl => '1 hour'::interval)`;
});
A.after(async (ctx) => { await closeRoles(ctx); });

const assign = (ctx: SqlCtx, m: string, n: string) => ctx.as.assignment`select assignment.assign(module_name => ${m}::text, node_name => ${n}::text) as r`;

A('a module the catalogue does not have is refused (MSH20)', async (ctx) => {
  await refusedWith(assign(ctx, 'ghost', 'web1'), 'MSH20');
});

A('a node that is not enrolled is refused (MSH21), a token issued is not enough', async (ctx) => {
  await refusedWith(assign(ctx, 'web', 'nobody'), 'MSH21');
  await refusedWith(assign(ctx, 'web', 'waiting'), 'MSH21');
  assert.is((await ctx.as.assignment`select count(*)::int as n from assignment.assignment`)[0]!.n, 0);
  assert.is((await assign(ctx, 'web', 'web1'))[0]!.r, true);
});

A('D2: each allocation takes the next serial of each node', async (ctx) => {
  const take = async () => Object.fromEntries((await ctx.as.assignment`select node, serial from assignment.allocate_serials(node_names => ${['web1', 'db1']}::text[])`)
    .map((r) => [r.node, Number(r.serial)]));
  assert.equal(await take(), { web1: 1, db1: 1 });
  assert.equal(await take(), { web1: 2, db1: 2 });
  assert.is(Number((await ctx.as.assignment`select assignment.peek_serial(node_name => 'web1') as s`)[0]!.s), 3);
});

A.run();
