// assignment's rules as mesh_assignment: an assignment names a module the
// catalogue has (MSH20) and an enrolled node (MSH21); serials only go forward (D2);
// a composition is the very text jsonb prints, so its hash is what it always was (W2);
// a machine rebuilt under a retired name is owed a declaration of its own (W2).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, refusedWith, enrol, putModule, assign as placed, type SqlCtx } from '../helpers.js';

const A = suite<SqlCtx>('assignment rules, as mesh_assignment');
A.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  await putModule(ctx.as, 'web');
  await enrol(ctx.as, 'web1');
  await ctx.as
    .inventory`select inventory.issue_token(node_name => 'waiting', token_hash => ${Buffer.alloc(32, 7)}::bytea, node_site => null, node_dialable => null, ttl => '1 hour'::interval)`;
});
A.after(async (ctx) => {
  await closeRoles(ctx);
});

const assign = (ctx: SqlCtx, m: string, n: string) =>
  ctx.as.assignment`select assignment.assign(module_name => ${m}::text, node_name => ${n}::text) as r`;

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
  const take = async () =>
    Object.fromEntries(
      (
        await ctx.as
          .assignment`select node, serial from assignment.allocate_serials(node_names => ${['web1', 'db1']}::text[])`
      ).map((r) => [r.node, Number(r.serial)]),
    );
  assert.equal(await take(), { web1: 1, db1: 1 });
  assert.equal(await take(), { web1: 2, db1: 2 });
  assert.is(Number((await ctx.as.assignment`select assignment.peek_serial(node_name => 'web1') as s`)[0]!.s), 3);
});

A("W2: a composition's text is the jsonb array as PostgreSQL prints it, and its hash is of that text", async (ctx) => {
  // Keys out of canonical order and nested lists: the firewall beside them is nested too.
  await putModule(ctx.as, 'files', [
    { path: '/srv/b', kind: 'file', id: 'file:/srv/b', content: 'Yg==', mode: '0644' },
    { mode: '0600', id: 'file:/srv/a', kind: 'file', path: '/srv/a', content: 'YQ==' },
  ]);
  await assign(ctx, 'files', 'web1');
  const [c] = await ctx.as
    .assignment`select resources, resources::jsonb::text as printed, resources_hash = sha256(convert_to(resources, 'utf8')) as hashed,
                                             jsonb_array_length(resources::jsonb) as n, assignment.compose('web1') = resources::jsonb as same from assignment.compose_each(array['web1'])`;
  assert.is(c!.n, 3, 'two files and the firewall');
  assert.is(c!.resources, c!.printed, 'the same bytes as the jsonb array printed');
  assert.ok(c!.hashed, 'the hash is of that text');
  assert.ok(c!.same, 'compose() answers the same composition');
});

A(
  "W2: a retired name enrolled again composes what it had, and is owed a declaration all the same: its old declarations were another machine's",
  async (ctx) => {
    await putModule(ctx.as, 'rebuilt-files', [
      { id: 'file:/etc/rebuilt', kind: 'file', path: '/etc/rebuilt', content: 'eA==', mode: '0644' },
    ]);
    const composed = async () =>
      (
        await ctx.as
          .assignment`select resources, encode(resources_hash, 'hex') as hash, changed from assignment.compose_each(${['rebuilt']}::text[])`
      )[0]!;
    const plan = async () =>
      (await ctx.as.assignment`select id, change from assignment.plan_changes(${['rebuilt']}::text[])`).map(
        (r) => `${r.id} ${r.change}`,
      );
    await enrol(ctx.as, 'rebuilt');
    await placed(ctx.as, 'rebuilt-files', 'rebuilt');
    const before = await composed();
    assert.is(before.changed, true, 'a node never declared is owed its first declaration');
    // Declared and acknowledged, as serve and the node would.
    const [{ serial }] = (await ctx.as
      .assignment`select serial from assignment.allocate_serials(node_names => ${['rebuilt']}::text[])`) as unknown as [
      { serial: string },
    ];
    const envelope = JSON.stringify({
      body: JSON.stringify({ serial: Number(serial), resources: JSON.parse(before.resources) }),
    });
    await ctx.as
      .assignment`select assignment.record_declarations(${['rebuilt']}::text[], ${[serial]}::bigint[], ${['00'.repeat(32)]}::text[], ${[before.hash]}::text[], ${envelope}::text)`;
    await ctx.as
      .assignment`select assignment.acknowledge(node_name => 'rebuilt', applied => ${serial}::bigint, superseded => '{}'::bigint[])`;
    assert.is((await composed()).changed, false);
    assert.equal(await plan(), [], 'what it runs is what it is to hold');
    // The machine is rebuilt: retired, enrolled again under its name, its module placed again.
    await ctx.as.inventory`select inventory.retire_node(node_name => 'rebuilt')`;
    await enrol(ctx.as, 'rebuilt');
    await placed(ctx.as, 'rebuilt-files', 'rebuilt');
    const after = await composed();
    assert.is(after.hash, before.hash, 'the same composition, byte for byte (else this test shows nothing)');
    assert.is(after.changed, true, 'the rebuilt machine holds nothing yet: it is owed a declaration');
    assert.ok(
      (await plan()).includes('file:/etc/rebuilt added'),
      'mesh plan shows what the rebuilt machine is to hold, against nothing',
    );
  },
);

A.run();
