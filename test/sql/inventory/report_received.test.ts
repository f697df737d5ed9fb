// Several serves: a report message is recorded once however often
// the broker delivers it (inventory 0010), as mesh_inventory calls it. (An
// enrolment redelivered sets the password its request carries: test/enrol/resume.)
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { openRoles, closeRoles, enrol, type SqlCtx } from '../helpers.js';

const S = suite<SqlCtx>('a report message recorded once, as mesh_inventory');
S.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
});
S.after(async (ctx) => {
  await closeRoles(ctx);
});

const receive = async (ctx: SqlCtx, node: string, id: string, serial: number | null) =>
  (
    await ctx.as
      .inventory`select inventory.receive_report(node_name => ${node}::text, report_message_id => ${id}::text, report_serial => ${serial}::bigint) as first`
  )[0]!.first as boolean;

S('the first delivery of a message id is new; every redelivery, from any serve, is not', async (ctx) => {
  await enrol(ctx.as, 'rr1');
  const id = randomBytes(8).toString('hex');
  assert.is(await receive(ctx, 'rr1', id, 3), true);
  assert.is(await receive(ctx, 'rr1', id, 3), false);
  assert.is(
    await receive(ctx, 'rr1', randomBytes(8).toString('hex'), 3),
    true,
    'another message of the same serial is another report',
  );
});

S('of concurrent deliveries of one message exactly one is new (two serves at once)', async (ctx) => {
  await enrol(ctx.as, 'rr2');
  const id = randomBytes(8).toString('hex');
  const firsts = await Promise.all(Array.from({ length: 8 }, () => receive(ctx, 'rr2', id, 1)));
  assert.is(firsts.filter(Boolean).length, 1);
});

S(
  '"seen" rolls back with the recording it belongs to: a serve killed before its commit leaves the report to be recorded again',
  async (ctx) => {
    await enrol(ctx.as, 'rr3');
    const id = randomBytes(8).toString('hex');
    await ctx.as.inventory
      .begin(async (tx) => {
        await tx`select inventory.receive_report(node_name => 'rr3', report_message_id => ${id}, report_serial => 1)`;
        await tx`select 1/0`;
      })
      .catch(() => {});
    assert.is(await receive(ctx, 'rr3', id, 1), true);
  },
);

S('a node keeps a day of received ids: older ones go as it reports', async (ctx) => {
  await enrol(ctx.as, 'rr4');
  const old = randomBytes(8).toString('hex');
  await receive(ctx, 'rr4', old, 1);
  await ctx.store
    .admin`update inventory.report_received set received_at = now() - interval '25 hours' where message_id = ${old}`;
  await receive(ctx, 'rr4', randomBytes(8).toString('hex'), 2);
  const left = await ctx.store.admin`select message_id from inventory.report_received where node = 'rr4'`;
  assert.is(left.length, 1);
  assert.is.not(left[0]!.message_id, old);
});

S.run();
