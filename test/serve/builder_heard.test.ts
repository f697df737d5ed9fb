// R3: only a node's own account moves its last_seen. RabbitMQ checks a
// message's user_id against the account that sent it, and serve reads the
// account's kind from that name: a build machine enrolled as builder.web1 is
// not node web1, so its heards, reports and recovers cannot keep a dead node
// `here`. Real serve, real broker: the builder's messages go first, then a
// heard of a live node's own account marks the moment serve has read them.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { until } from '../declare/helpers.js';
import { connectAsHost } from '../harness/node_account.js';
import { connectBroker, type Connection } from '../../src/broker/connect.js';
import { Accounts } from '../../src/broker/accounts.js';
import { EXCHANGE, BUILD_QUEUE } from '../../src/broker/topology.js';
import { publish } from '../../src/broker/publish.js';

interface Ctx {
  mesh: Mesh;
  serve: Proc;
  conns: Connection[];
}
const H = suite<Ctx>("a node's last_seen moves only for its own account (R3)");

H.before(async (ctx) => {
  ctx.conns = [];
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
});
H.after(async (ctx) => {
  await Promise.allSettled(ctx.conns.map((c) => c.close()));
  await ctx.mesh?.stop();
});

const state = async (ctx: Ctx, node: string) =>
  (await ctx.mesh.store.admin`select state, last_seen from inventory.node_status where name = ${node}`)[0]!;

H(
  'a builder account named as a node cannot keep that dead node here: heard, report and recover move nothing',
  async (ctx) => {
    const { mesh } = ctx;
    const hosts: Record<string, ReturnType<Mesh['host']>> = {};
    for (const n of ['web1', 'web2']) {
      hosts[n] = mesh.host(n);
      const r = await hosts[n]!.enrol(await mesh.token(n));
      assert.is(r.code, 0, r.stderr);
    }
    // web1 is dead: silent for ten minutes, and no mesh-host runs for it.
    await mesh.store
      .admin`update inventory.node set last_seen = now() - interval '10 minutes' where name in ('web1', 'web2')`;
    assert.match((await state(ctx, 'web1')).state, /^out of touch/);
    const before = (await state(ctx, 'web1')).last_seen as Date;

    // A build machine whose name is the node's.
    const accounts = new Accounts({
      url: mesh.broker.management,
      user: mesh.broker.user,
      password: mesh.broker.password,
      vhost: mesh.broker.vhost,
      accountPrefix: mesh.prefix,
    });
    const password = randomBytes(24).toString('base64url');
    await accounts.createBuilder('web1', password, BUILD_QUEUE);
    const builderUser = accounts.builderAccount('web1');
    const amqp = Array.isArray(mesh.broker.amqp) ? mesh.broker.amqp[0]! : mesh.broker.amqp;
    const builder = await connectBroker(
      { ...amqp, vhost: mesh.vhost, user: builderUser, password },
      { name: 'builder named web1' },
    );
    ctx.conns.push(builder);
    const bch = await builder.createConfirmChannel();
    const smark = ctx.serve.output().length;
    // Confirmed, so each is on mesh.control before the next message below is sent.
    await publish(bch, EXCHANGE, 'heard', Buffer.from('web1'), { userId: builderUser });
    await publish(bch, EXCHANGE, 'recover', Buffer.from('{}'), { userId: builderUser });
    await publish(bch, EXCHANGE, 'report', Buffer.from('{}'), { userId: builderUser });

    // web2's own heard, sent after: once it moved web2's last_seen, serve has read the builder's heard.
    const { conn: node, user: web2User } = await connectAsHost(hosts.web2!.dir, 'node web2');
    ctx.conns.push(node);
    const nch = await node.createConfirmChannel();
    await publish(nch, EXCHANGE, 'heard', Buffer.from('web2'), { userId: web2User });
    await until('web2 heard on its own account', async () => (await state(ctx, 'web2')).state === 'here', 20_000);
    // The report and recover go by the builder account's own lane, in order: the report's line says both were read.
    await ctx.serve.waitFor(/report: dropped one from "web1", which is not a node account/, 20_000, smark);

    const after = await state(ctx, 'web1');
    assert.match(after.state, /^out of touch/, 'web1 is still out of touch');
    assert.equal(after.last_seen, before, "web1's last_seen did not move");
  },
);

H.run();
