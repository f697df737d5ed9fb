// Issue 19, the broker cluster: three RabbitMQ nodes on loopback
// (test/harness/rabbit_cluster.ts), a real `mesh serve` given every node and
// a real mesh-host knowing all three brokers (mesh broker add). The node the
// host is connected to is killed with SIGKILL: the host reconnects to another
// node by itself, gets its newest serial and the declaration made after the
// kill, and its report of it is recorded (through mesh.control, a quorum queue,
// with a node dead). The killed node comes back and every quorum queue (the
// control and build queues and the node's own) lists it a member and online again.
// It begins as a mesh grows: serve told of one broker node, the host's queue
// classic; serve told of all three moves it to quorum and the host, cancelled,
// comes back by itself (no enrolment).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { startCluster, type RabbitCluster } from '../harness/rabbit_cluster.js';
import { BUILD_QUEUE, CONTROL_QUEUE } from '../../src/broker/topology.js';
import { queueOf } from '../../src/wire/names.js';
import { writeBroker } from '../../src/home/home.js';

const S = suite<{ cluster: RabbitCluster; mesh: Mesh }>('a broker cluster: a node killed under a host');
S.before(async (ctx) => {
  // A cluster that does not start says why: test/harness/suite.ts prints a hook's error.
  ctx.cluster = await startCluster(join(mkdtempSync(join(tmpdir(), 'mesh-cluster-')), 'rabbit'));
  ctx.mesh = await freshMesh({ cluster: ctx.cluster });
});
S.after(async (ctx) => {
  await ctx.mesh?.stop();
  await ctx.cluster?.stop();
});

async function until<T>(what: string, f: () => Promise<T | undefined | false>, tries = 300): Promise<T> {
  let last: unknown;
  for (let i = 0; i < tries; i++) {
    try {
      const v = await f();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`never happened: ${what}${last ? ` (${(last as Error).message})` : ''}`);
}

const reported = async (mesh: Mesh, node: string) =>
  (
    await mesh.store
      .admin`select r.serial::int as reported, (select max(serial)::int from assignment.declaration d where d.node = ${node}) as newest
                          from inventory.report r where r.node = ${node}`
  )[0] as { reported: number; newest: number } | undefined;

S(
  'SIGKILL of the node a host is connected to: the host moves on, gets what it is owed, reports; the node rejoins every quorum queue',
  async ({ cluster, mesh }) => {
    // A mesh on one broker node: serve's broker.json names one, and c1's queue is classic.
    const list = mesh.broker;
    await writeBroker(
      {
        ...list,
        amqp: (list.amqp as { host: string; port: number }[])[0]!,
        management: (list.management as string[])[0]!,
      },
      mesh.env,
    );
    const alone = await mesh.serve();
    for (const n of cluster.nodes.slice(1)) {
      const r = await mesh.cli(['broker', 'add', `127.0.0.1:${n.amqpsPort}`, '--fingerprint', n.fingerprint]);
      assert.is(r.code, 0, r.stderr);
    }
    const { proc } = await mesh.joined('c1');
    assert.is(
      (await cluster.queueStatus(mesh.vhost, queueOf('c1'))).type,
      'classic',
      'on one broker node, a node queue is classic',
    );
    // The cluster named to serve: c1's queue is made again as quorum, c1 connects again by itself.
    await alone.stop();
    await writeBroker(list, mesh.env);
    const moved = proc.output().length;
    let serve = await mesh.serve();
    await proc.waitFor(/queue was made again[\s\S]*connected to /, 60_000, moved);
    const at = Number(
      (
        await proc.waitFor(/connected to 127\.0\.0\.1:(\d+)/, 60_000, proc.output().lastIndexOf('queue was made again'))
      )[1],
    );
    const dead = cluster.nodes.findIndex((n) => n.amqpsPort === at);
    assert.ok(dead >= 0, `c1 is connected to a node of the cluster (${at})`);
    // Its queue, the control and the build queue: quorum, a member on every node.
    const all = cluster.nodes.map((n) => n.nodename).sort();
    for (const q of [CONTROL_QUEUE, BUILD_QUEUE, queueOf('c1')]) {
      const st = await cluster.queueStatus(mesh.vhost, q);
      assert.equal([st.type, st.members], ['quorum', all], `${q} is a quorum queue on all three nodes`);
    }
    // serve on the same broker node as c1 (its list starting there), so the kill takes both.
    await serve.stop();
    const amqp = list.amqp as { host: string; port: number }[];
    await writeBroker({ ...list, amqp: [...amqp.slice(dead), ...amqp.slice(0, dead)] }, mesh.env);
    serve = await mesh.serve();
    assert.match(
      serve.output(),
      `consuming mesh.control on 127.0.0.1:${cluster.nodes[dead]!.amqpPort}`,
      'serve is on the node c1 is on',
    );
    const before = await until('c1 reports its newest', async () => {
      const r = await reported(mesh, 'c1');
      return r && r.reported === r.newest && r;
    });

    const mark = proc.output().length;
    await cluster.kill(dead);
    // The host moves on to another node by itself (its link, with the brokers it was declared).
    const serveMark = serve.output().length;
    const again = Number((await proc.waitFor(/connected to 127\.0\.0\.1:(\d+)/, 60_000, mark))[1]);
    const serveAgain = Number(
      (await serve.waitFor(/consuming mesh\.control on 127\.0\.0\.1:(\d+)/, 60_000, serveMark))[1],
    );
    assert.is.not(serveAgain, cluster.nodes[dead]!.amqpPort, 'serve reconnected to another node');
    assert.is.not(again, at, 'c1 reconnected to another node');
    console.log(
      `killed ${cluster.nodes[dead]!.nodename} (c1 and serve on it); c1 reconnected to :${again}, serve to :${serveAgain}`,
    );
    // A declaration made after the kill reaches it through its quorum queue; its report comes back through mesh.control.
    const d = await mesh.cli(['declare', 'c1', '--json']);
    assert.is(d.code, 0, d.stderr);
    const after = await until('c1 reports the declaration made after the kill', async () => {
      const r = await reported(mesh, 'c1');
      return r && r.newest > before.newest && r.reported === r.newest && r;
    });
    assert.ok(after.reported > before.reported, 'a report sent after the kill is recorded at the newer serial');
    assert.is(serve.child.exitCode, null, 'serve carried on');
    console.log(
      `c1 reported serial ${before.reported} before the kill, ${after.reported} (declared after it) with the node dead`,
    );

    await cluster.resume(dead);
    for (const q of [CONTROL_QUEUE, BUILD_QUEUE, queueOf('c1')]) {
      const st = await until(`${q} lists the killed node online again`, async () => {
        const s = await cluster.queueStatus(mesh.vhost, q);
        return s.online.length === all.length && s;
      });
      assert.equal([st.members, st.online], [all, all], `${q}: the killed node is a member and online again`);
    }
  },
);

S.run();
