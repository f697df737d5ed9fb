// Issue 19: an existing mesh's mesh.control and mesh.build are classic; a
// serve of this version moves them to quorum queues under their own names.
// Reports a node published before serve started (waiting in the classic
// queue) and during the move are all recorded, build requests waiting in the
// classic build queue all reach the quorum one, and the node carries on with
// the identity it had: nothing lost, nobody enrolled again.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { connectBroker, type Connection } from '../../src/broker/connect.js';
import { adminEndpoint } from '../../src/broker/admin.js';
import { publish } from '../../src/broker/publish.js';
import {
  BUILD_QUEUE,
  BUILD_REQUEST,
  CONTROL_KINDS,
  CONTROL_QUEUE,
  EXCHANGE,
  moving,
  moveToQuorum,
  finishMove,
  kindOf,
} from '../../src/broker/topology.js';
import { writeReport } from '../../src/wire/report.js';
import { servers } from '../harness/servers.js';

const S = suite<{ mesh: Mesh }>('classic mesh.control and mesh.build move to quorum');
S.before(async (ctx) => {
  ctx.mesh = await freshMesh();
});
S.after(async (ctx) => {
  await ctx.mesh.stop();
});

async function queueType(mesh: Mesh, q: string): Promise<string | undefined> {
  const r = await mesh.mgmt('GET', `/queues/${encodeURIComponent(mesh.vhost)}/${encodeURIComponent(q)}`);
  return r.status === 404 ? undefined : ((await r.json()) as { type: string }).type;
}

async function reports(conn: Connection, user: string, from: number, to: number): Promise<void> {
  const ch = await conn.createConfirmChannel();
  const body = writeReport({ v: 1, serial: 0, held: [], failed: [], corrected: [], superseded: [] });
  for (let i = from; i < to; i++)
    await publish(ch, EXCHANGE, 'report', body, {
      mandatory: true,
      userId: user,
      messageId: `move-${i}`,
      type: 'report',
    });
  await ch.close();
}

S(
  'reports and build requests waiting in the classic queues, and sent during the move, all arrive; the node keeps its identity',
  async ({ mesh }) => {
    const first = await mesh.serve();
    const { host, proc } = await mesh.joined('m1');
    await proc.stop();
    await first.stop();
    // The mesh as it was before quorum queues: classic queues under the same names and keys.
    const admin = await connectBroker(adminEndpoint(mesh.broker), { name: 'the old topology' });
    let node: Connection | undefined;
    try {
      const ch = await admin.createConfirmChannel();
      for (const q of [CONTROL_QUEUE, BUILD_QUEUE]) {
        await ch.deleteQueue(q);
        await ch.assertQueue(q, { durable: true });
      }
      for (const k of CONTROL_KINDS) await ch.bindQueue(CONTROL_QUEUE, EXCHANGE, k);
      await ch.bindQueue(BUILD_QUEUE, EXCHANGE, BUILD_REQUEST);
      assert.is(await queueType(mesh, CONTROL_QUEUE), 'classic');
      // Waiting in the old queues: 30 reports of m1 (its own account, over TLS) and 5 build requests.
      const id = JSON.parse(readFileSync(join(host.dir, 'identity.json'), 'utf8')) as {
        broker: { vhost: string; user: string };
        password: string;
      };
      const s = servers();
      node = await connectBroker(
        {
          host: '127.0.0.1',
          port: s.rabbit.amqpsPort,
          vhost: id.broker.vhost,
          user: id.broker.user,
          password: id.password,
          fingerprint: s.rabbit.fingerprint,
        },
        { name: 'm1 reports' },
      );
      await reports(node, id.broker.user, 0, 30);
      for (let i = 0; i < 5; i++)
        await publish(ch, EXCHANGE, BUILD_REQUEST, Buffer.from(`{"waiting":${i}}`), {
          mandatory: true,
          userId: mesh.broker.user,
          messageId: `build-${i}`,
        });
      const serve = await mesh.serve();
      // And during the move.
      await reports(node, id.broker.user, 30, 40);
      await serve.waitFor(/mesh\.control and mesh\.build are quorum queues/, 60_000);
      for (const q of [CONTROL_QUEUE, BUILD_QUEUE])
        assert.is(await queueType(mesh, q), 'quorum', `${q} is a quorum queue`);
      for (const q of [moving(CONTROL_QUEUE), moving(BUILD_QUEUE)])
        assert.is(await queueType(mesh, q), undefined, `${q} is gone`);
      assert.is(
        (await ch.checkQueue(BUILD_QUEUE)).messageCount,
        5,
        'every waiting build request is in the quorum build queue',
      );
      let recorded = 0;
      for (let i = 0; i < 100 && recorded < 40; i++) {
        recorded = (
          await mesh.store
            .admin`select count(*)::int as n from inventory.report_received where message_id like 'move-%'`
        )[0]!.n;
        if (recorded < 40) await new Promise((r) => setTimeout(r, 200));
      }
      assert.is(recorded, 40, 'every report, waiting or sent during the move, is recorded');
      // The node comes back as it was: connected with the identity it had, no enrolment.
      const again = host.run();
      await again.waitFor(/connected to /, 60_000);
      const tokens = await mesh.store.admin`select count(*)::int as n from inventory.token where node = 'm1'`;
      assert.is(tokens[0]!.n, 1, 'one token ever: m1 was not enrolled again');
    } finally {
      // Open connections would keep the suite's process alive after a failure.
      await node?.close().catch(() => {});
      await admin.close().catch(() => {});
    }
  },
);

S(
  'a classic queue still holding a message is never deleted by the move; emptied, it is made again as quorum',
  async ({ mesh }) => {
    const conn = await connectBroker(adminEndpoint(mesh.broker), { name: 'the guard' });
    try {
      const ch = await conn.createConfirmChannel();
      await ch.assertExchange(EXCHANGE, 'topic', { durable: true });
      await ch.assertQueue('guard.q', { durable: true });
      await ch.bindQueue('guard.q', EXCHANGE, 'guard.k');
      await publish(ch, EXCHANGE, 'guard.k', Buffer.from('kept'), { mandatory: true });
      assert.is(await moveToQuorum(conn, 'guard.q', ['guard.k']), 'moving');
      assert.is(
        await finishMove(conn, 'guard.q', ['guard.k']),
        'moving',
        'not finished while the classic queue holds a message',
      );
      assert.is((await ch.checkQueue('guard.q')).messageCount, 1, 'the message is still there');
      const m = await ch.get('guard.q');
      assert.is(m && m.content.toString(), 'kept');
      ch.ack(m as never);
      await ch.close();
      assert.is(await finishMove(conn, 'guard.q', ['guard.k']), 'quorum', 'emptied, the move finishes');
      assert.is(await kindOf(conn, 'guard.q'), 'quorum');
    } finally {
      await conn.close().catch(() => {});
    }
  },
);

S.run();
