// R1, W1: the one confirmed publish. A mandatory message no queue takes is
// said (Unroutable, naming where it was going), never dropped in silence; a
// message a queue took resolves only once the broker confirmed it.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { connectBroker, type Connection } from '../../src/broker/connect.js';
import { adminEndpoint } from '../../src/broker/admin.js';
import { publish, Unroutable } from '../../src/broker/publish.js';

const P = suite<{ mesh: Mesh; conn: Connection }>('one confirmed publish');

P.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.conn = await connectBroker(adminEndpoint(ctx.mesh.broker), { name: 'publish test' });
});
P.after(async (ctx) => {
  await ctx.conn.close().catch(() => {});
  await ctx.mesh.stop();
});

P('a mandatory message to a queue that does not exist is Unroutable, naming the queue', async ({ conn }) => {
  const ch = await conn.createConfirmChannel();
  const err = await publish(ch, '', 'node.nobody', Buffer.from('x'), { mandatory: true }).then(
    () => null,
    (e: Error) => e,
  );
  assert.instance(err, Unroutable);
  assert.match(err!.message, /queue node\.nobody/);
  // Unrouted on an exchange: named by its routing key.
  await ch.assertExchange('publish-test', 'direct', { durable: false, autoDelete: true });
  const viaKey = await publish(ch, 'publish-test', 'nothing-bound', Buffer.from('x'), { mandatory: true }).then(
    () => null,
    (e: Error) => e,
  );
  assert.instance(viaKey, Unroutable);
  assert.match(viaKey!.message, /routing key nothing-bound on exchange publish-test/);
});

P('a message a queue takes is confirmed, and one return does not spoil the next publish', async ({ conn }) => {
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue('publish-test-q', { durable: false, autoDelete: false });
  await publish(ch, '', 'node.nobody', Buffer.from('lost'), { mandatory: true }).catch(() => {});
  await publish(ch, '', 'publish-test-q', Buffer.from('kept'), { mandatory: true });
  const got = await ch.get('publish-test-q', { noAck: true });
  assert.ok(got, 'the message is on the queue');
  assert.is(got && got.content.toString(), 'kept');
  await ch.deleteQueue('publish-test-q');
});

P.run();
