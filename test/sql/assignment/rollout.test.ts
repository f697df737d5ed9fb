// C1 in SQL, as mesh_assignment: assignment.advance_rollout judges the open
// rollout by its own nodes and waves alone. An earlier rollout's waves, nodes
// and failures are history: they neither lengthen nor halt the one rolling.
// Declarations are recorded and acknowledged as declare and serve's report
// handler do (signature aside); the rollouts through real hosts are in
// test/assignment/rollout.test.ts.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, enrol, assign, putModule, declareOne, tampered, type SqlCtx } from '../helpers.js';

const NODES = ['r1', 'r2', 'r3'];
const R = suite<SqlCtx>('rollout steps in SQL, as mesh_assignment');

/** The module every node runs, at version V: changing it changes all three compositions. */
const web = (ctx: SqlCtx, v: string) =>
  putModule(ctx.as, 'web', [
    {
      id: 'file:/etc/web.conf',
      kind: 'file',
      path: '/etc/web.conf',
      content: Buffer.from(v).toString('base64'),
      mode: '0644',
    },
  ]);

const applied = async (ctx: SqlCtx, node: string) =>
  ctx.as.assignment`select assignment.acknowledge(${node}, ${await declareOne(ctx.as, node)}, '{}'::bigint[])`;

/** One step, as serve takes it: the rollout's state and wave after it and how many nodes it released, each declared and applied. */
async function step(ctx: SqlCtx): Promise<{ state: string; wave: number; released: number }> {
  const [r] = await ctx.as.assignment`select state, wave, undeclared from assignment.advance_rollout()`;
  for (const n of r!.undeclared as string[]) await applied(ctx, n);
  return { state: r!.state as string, wave: r!.wave as number, released: r!.undeclared.length as number };
}

/** Hold, change the module to V, and start over WAVES. */
async function rollout(ctx: SqlCtx, v: string, waves: string[]): Promise<void> {
  await ctx.as.assignment`select assignment.hold_changes()`;
  await web(ctx, v);
  await ctx.as
    .assignment`select assignment.start_rollout(wave_list => ${waves}::text[], wait => '1 hour'::interval, failing_allowed => 0, canaries => '{}'::text[])`;
}

R.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  await web(ctx, 'v0');
  for (const n of NODES) {
    await enrol(ctx.as, n);
    await assign(ctx.as, 'web', n);
  }
  for (const n of NODES) await applied(ctx, n);
});
R.after(async (ctx) => {
  await closeRoles(ctx);
});

R('a rollout in three waves passes each when its nodes applied, and is done after the third', async (ctx) => {
  await rollout(ctx, 'v1', ['1', '2', '3']);
  const seen = [];
  for (let i = 0; i < 4; i++) seen.push(await step(ctx));
  assert.equal(seen, [
    { state: 'rolling', wave: 1, released: 1 },
    { state: 'rolling', wave: 2, released: 1 },
    { state: 'rolling', wave: 3, released: 1 },
    { state: 'done', wave: 3, released: 0 },
  ]);
});

R("a later rollout of one wave is done after its one wave: the earlier one's three are not its own", async (ctx) => {
  await rollout(ctx, 'v2', ['100%']);
  assert.equal(await step(ctx), { state: 'rolling', wave: 1, released: 3 });
  assert.equal(await step(ctx), { state: 'done', wave: 1, released: 0 });
  const [s] = await ctx.as.assignment`select count(*)::int as n from assignment.rollout where state = 'done'`;
  assert.is(s!.n, 2);
});

R('a hold released lets its own changes out and leaves the rollouts before it as they ended', async (ctx) => {
  await ctx.as.assignment`select assignment.hold_changes()`;
  await web(ctx, 'v3');
  await ctx.as.assignment`select assignment.release_hold()`;
  const rows = await ctx.as.assignment`select state from assignment.rollout order by id`;
  assert.equal(
    rows.map((r) => r.state),
    ['done', 'done', 'released'],
  );
});

/** Every rollout and rollout node as it stands: what a later rollout's steps must leave alone. */
const everything = async (ctx: SqlCtx) => ({
  rollouts: (await ctx.as.assignment`select id::int, state, wave from assignment.rollout order by id`).map((r) => ({
    ...r,
  })),
  nodes: (
    await ctx.as
      .assignment`select rollout::int, node, wave, released_at from assignment.rollout_node order by rollout, node`
  ).map((r) => ({ ...r })),
});

R(
  'a waiting wave hands back only its nodes not yet declared, and leaves earlier rollouts as they ended',
  async (ctx) => {
    const before = await everything(ctx);
    await rollout(ctx, 'v4', ['100%']);
    const [first] = await ctx.as.assignment`select state, wave, undeclared from assignment.advance_rollout()`;
    assert.equal([...first!.undeclared].sort(), NODES, 'the wave released all three');
    await declareOne(ctx.as, 'r1');
    const [waiting] = await ctx.as.assignment`select state, wave, undeclared from assignment.advance_rollout()`;
    assert.equal(
      { ...waiting, undeclared: [...waiting!.undeclared].sort() },
      { state: 'rolling', wave: 1, undeclared: ['r2', 'r3'] },
      'r1 is declared and not yet applied: owed nothing more',
    );
    for (const n of NODES) await applied(ctx, n);
    assert.equal(await step(ctx), { state: 'done', wave: 1, released: 0 });
    const after = await everything(ctx);
    assert.equal(after.rollouts.slice(0, -1), before.rollouts, 'the waves and ends of the earlier rollouts');
    assert.equal(after.nodes.slice(0, before.nodes.length), before.nodes, 'when each of their nodes was released');
  },
);

R('a wave is late only past its wait: at the very instant the wait ends it still waits', async (ctx) => {
  await rollout(ctx, 'v5', ['100%']);
  assert.equal((await ctx.as.assignment`select state from assignment.advance_rollout()`)[0]!.state, 'rolling');
  // The wave's start moved back by exactly its wait (and a microsecond more), in a transaction undone after.
  const after = (more: string) =>
    tampered(ctx, async (sql) => {
      await sql`update assignment.rollout set wave_started = now() - wait_healthy - ${more}::interval where state = 'rolling'`;
      return (await sql`select state from assignment.advance_rollout()`)[0]!.state as string;
    });
  assert.is(await after('0'), 'rolling', 'waited exactly its wait: not yet late');
  assert.is(await after('1 microsecond'), 'halted', 'a microsecond past its wait: late');
  for (const n of NODES) await applied(ctx, n);
  assert.equal(await step(ctx), { state: 'done', wave: 1, released: 0 });
});

R.run();
