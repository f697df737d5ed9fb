// A wedged agent: here (its heard keeps coming, its link is up) but not
// applying what the broker confirmed onto its queue. On real servers: the
// host is stopped and its heard is said for it over its own broker account,
// exactly what a mesh-host whose apply loop is stuck while its link lives
// looks like from the mesh. node_status, `mesh node list` and /metrics say
// wedged once the declaration has waited past the setting, and here again
// once the host applies it; a node that just came back from silence is not
// wedged for a declaration delivered while it was away.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import type { ConfirmChannel } from 'amqplib';
import { freshMesh, type Mesh, type Host, type Proc } from '../harness/mesh.js';
import { addModule, cli, root, b64, until } from '../declare/helpers.js';
import { loadIdentity } from '../../host/identity.js';
import { connectBroker, type Connection } from '../../src/broker/connect.js';
import { publishHeard } from '../../host/heard.js';
import { join } from 'node:path';

interface Ctx {
  mesh: Mesh;
  host: Host;
  proc: Proc;
  root: string;
  conn?: Connection;
}

const W = suite<Ctx>('wedged: here, but not applying what was delivered');

W.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.root = root();
  await ctx.mesh.serve();
  const j = await ctx.mesh.joined('wedge1', { MESH_HOST_ROOTS: ctx.root });
  ctx.host = j.host;
  ctx.proc = j.proc;
});
W.after(async (ctx) => {
  await ctx.conn?.close().catch(() => {});
  await ctx.mesh.stop();
});

const state = async (mesh: Mesh, node: string) =>
  ((await mesh.store.admin`select state from inventory.node_status where name = ${node}`)[0]?.state as string) ?? '';

/** Say heard as the node, over its own account: its link, without its agent. */
async function heardAs(ctx: Ctx): Promise<ConfirmChannel> {
  const id = loadIdentity(ctx.host.dir)!;
  const b = id.brokers[0]!;
  ctx.conn = await connectBroker(
    {
      host: b.host,
      port: b.port,
      vhost: id.broker.vhost,
      user: id.broker.user,
      password: id.password,
      fingerprint: b.fingerprint,
    },
    { name: 'test: heard without an agent' },
  );
  const ch = await ctx.conn.createConfirmChannel();
  publishHeard(ch, id.name, id.broker.user);
  return ch;
}

W(
  'a node here whose delivered declaration waits unapplied past the setting reads wedged, then here once applied',
  async (ctx) => {
    const { mesh } = ctx;
    await until(
      'wedge1 applied its first declaration and is here',
      async () => (await state(mesh, 'wedge1')) === 'here',
    );
    await ctx.proc.stop();
    const ch = await heardAs(ctx);
    await mesh.store.admin`select inventory.set_wedged_after(1)`;
    await addModule(mesh, 'w1', [{ kind: 'file', path: join(ctx.root, 'w1.conf'), content: b64('x'), mode: '0644' }]);
    await cli(mesh, 'assign', 'w1', 'wedge1');
    // Delivered (confirmed onto its queue), never applied: the agent is gone, its heard goes on.
    await until('the declaration delivered', async () => {
      const [r] = await mesh.store
        .admin`select delivered_serial, reported_serial from inventory.node_status where name = 'wedge1'`;
      return r && r.delivered_serial > r.reported_serial;
    });
    await until('wedge1 wedged', async () => {
      publishHeard(ch, 'wedge1', loadIdentity(ctx.host.dir)!.broker.user);
      return (await state(mesh, 'wedge1')) === 'wedged';
    });
    const listed = JSON.parse(await cli(mesh, 'node', 'list', '--json')) as { name: string; state: string }[];
    assert.is(listed.find((n) => n.name === 'wedge1')?.state, 'wedged', 'mesh node list says it');
    // The agent back: it applies what waited, reports, and the node is here again.
    await ctx.conn!.close();
    ctx.conn = undefined;
    ctx.proc = ctx.host.run();
    await until('wedge1 here again after applying', async () => (await state(mesh, 'wedge1')) === 'here');
  },
);

W('a node back from silence is not wedged for a declaration delivered while it was away', async (ctx) => {
  const { mesh } = ctx;
  await ctx.proc.stop();
  await mesh.store.admin`select inventory.set_wedged_after(60)`;
  await addModule(mesh, 'w2', [{ kind: 'file', path: join(ctx.root, 'w2.conf'), content: b64('y'), mode: '0644' }]);
  await cli(mesh, 'assign', 'w2', 'wedge1');
  await until('the declaration delivered', async () => {
    const [r] = await mesh.store
      .admin`select delivered_serial, reported_serial from inventory.node_status where name = 'wedge1'`;
    return r && r.delivered_serial > r.reported_serial;
  });
  // Away ten minutes, delivered ten minutes ago: long past the setting, but the node is only now back.
  await mesh.store.admin`update inventory.node set last_seen = now() - interval '10 minutes' where name = 'wedge1'`;
  await mesh.store
    .admin`update assignment.outbox set delivered_at = now() - interval '10 minutes' where node = 'wedge1' and delivered_at > now() - interval '10 minutes'`;
  await heardAs(ctx);
  await until(
    'wedge1 heard again',
    async () => (await state(mesh, 'wedge1')) !== '' && !(await state(mesh, 'wedge1')).startsWith('out of touch'),
  );
  assert.is(await state(mesh, 'wedge1'), 'here', 'back a moment ago: not wedged yet');
});

W.run();
