// W1: a declaration is delivered only when a queue took it. The drain
// publishes mandatory, so a node whose queue is gone (retired, or never made)
// is said by the broker rather than dropped in silence: its row stays owed,
// with an error naming the queue, however often the drain tries; a node whose
// queue is there is delivered in the same batch. Real PostgreSQL and RabbitMQ.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import postgres from 'postgres';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { enrol, type Roles } from '../sql/helpers.js';
import { CONTEXTS } from '../../src/store/contexts.js';
import { connectBroker, type Connection } from '../../src/broker/connect.js';
import { adminEndpoint } from '../../src/broker/admin.js';
import { queueOf } from '../../src/wire/names.js';
import { drainOnce } from '../../src/serve/drain.js';

interface Ctx {
  mesh: Mesh;
  as: Roles;
  conn: Connection;
}
const D = suite<Ctx>('the drain, when a node queue is gone (W1)');

D.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.as = Object.fromEntries(
    CONTEXTS.map((c) => [c, postgres(ctx.mesh.store.url(c), { max: 2, onnotice: () => {} })]),
  ) as unknown as Roles;
  ctx.conn = await connectBroker(adminEndpoint(ctx.mesh.broker), { name: 'drain test' });
});
D.after(async (ctx) => {
  await ctx.conn?.close().catch(() => {});
  await Promise.allSettled(Object.values(ctx.as ?? {}).map((s) => s.end({ timeout: 5 })));
  await ctx.mesh?.stop();
});

const rows = async (ctx: Ctx) =>
  Object.fromEntries(
    (
      await ctx.as.assignment`select node, attempts, last_error, delivered_at is not null as delivered
                                from assignment.outbox order by node`
    ).map((r) => [r.node as string, { attempts: r.attempts, error: r.last_error, delivered: r.delivered }]),
  );

D('a row whose node queue is gone stays owed with the reason; never marked delivered', async (ctx) => {
  const nodes = ['gone1', 'there1'];
  for (const n of nodes) await enrol(ctx.as, n);
  await ctx.as.assignment`select assignment.record_declarations(${nodes}::text[], ${[1, 1]}::bigint[],
    ${nodes.map(() => '00'.repeat(32))}::text[], ${nodes.map(() => '00'.repeat(32))}::text[],
    ${nodes.map((n) => `{"node":"${n}","serial":1}`).join('\n')}::text)`;
  const ch = await ctx.conn.createConfirmChannel();
  // Only there1 has a queue: gone1's was never made (as after mesh node retire removed it).
  await ch.assertQueue(queueOf('there1'), { durable: true });

  const first = await drainOnce(ctx.as.assignment, [ch], { everything: true });
  assert.equal(first, { taken: 2, delivered: 1 }, 'one delivered, one not');
  let r = await rows(ctx);
  assert.is(r.there1!.delivered, true, 'the routable row is delivered');
  assert.is(r.gone1!.delivered, false, 'the unroutable row is not marked delivered');
  assert.is(r.gone1!.attempts, 1);
  assert.is(r.gone1!.error, `the node's queue ${queueOf('gone1')} does not exist`);
  const got = await ch.get(queueOf('there1'), { noAck: true });
  assert.ok(got, "there1's declaration is on its queue");

  // Tried again (everything owed, backoff or not): still owed, still saying why.
  const again = await drainOnce(ctx.as.assignment, [ch], { everything: true });
  assert.equal(again, { taken: 1, delivered: 0 });
  r = await rows(ctx);
  assert.equal(r.gone1, {
    attempts: 2,
    error: `the node's queue ${queueOf('gone1')} does not exist`,
    delivered: false,
  });
  const [owed] = await ctx.as.assignment`select array_agg(node) as nodes from assignment.pending_delivery`;
  assert.equal(owed!.nodes, ['gone1'], 'mesh outbox lists it as owed');
  await ch.close();
});

D.run();
