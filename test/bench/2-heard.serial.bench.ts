// 2. Heard ingestion. A minute of a 100,000-node fleet (one heard from each)
// is waiting on the control queue when `mesh serve` starts; measured: how fast
// serve drains it into inventory.node.last_seen. Beside it, in the same run:
// the raw rate a trivial consumer drains the same number of messages from a
// queue of mesh.control's type (quorum), and the
// raw single-row UPDATE rate of the same PostgreSQL. Then the target load
// (100,000 a minute) is offered for a while and the backlog watched.
import { freshMesh, type Proc } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { PREFETCH } from '../../src/serve/intake.js';
import { declareTopology, CONTROL_QUEUE, EXCHANGE } from '../../src/broker/topology.js';
import {
  bench,
  figure,
  now,
  sleep,
  envInt,
  startServe,
  tempDir,
  cpuMeter,
  serverPids,
  describeCpu,
  summarizeProfile,
  describeProfile,
  insertNodes,
  impersonator,
  admin,
  tearDown,
} from './lib.js';
import { flood as floodOf, rawConsume, rawQueue } from './steps.js';

const FLEET = envInt('MESH_BENCH_HEARD_NODES', 100_000);
const OFFER_SECONDS = envInt('MESH_BENCH_HEARD_OFFER_SECONDS', 15);

await bench('2 heard ingestion', async (figs) => {
  const mesh = await freshMesh();
  const profile = tempDir('heard-prof');
  let serve: Proc | undefined;
  try {
    const names = await insertNodes(mesh, FLEET);
    const topo = await admin(mesh);
    const tch = await topo.createChannel();
    await declareTopology(topo);
    const rawKind = await rawQueue(topo, 'bench.raw');

    // Heards from many nodes over one connection: an impersonator sets each node's user_id, as its own connection would.
    const imp = await impersonator(mesh);
    const pub = await imp.createConfirmChannel();
    const flood = (key: string, list: string[]) => floodOf(pub, mesh, key, list);

    // Raw consume: a consumer that only acks, prefetch as serve's, the same messages, from a queue of mesh.control's type.
    await flood('bench.raw', names);
    const rawRate = await rawConsume(topo, 'bench.raw', FLEET);

    // Raw single-row UPDATE: the statement mark_heard makes, one row each, 32 in flight on 4 connections.
    const inv = await connect('inventory', { env: mesh.env, max: 4 });
    let k = 0;
    const u0 = now();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (now() - u0 < 3000) {
          await inv`update inventory.node set last_seen = now() where name = ${names[k++ % FLEET]!} and enrolled_at is not null`;
        }
      }),
    );
    const updateRate = k / ((now() - u0) / 1000);
    await inv`update inventory.node set last_seen = null`;

    // A minute of the fleet, waiting; then serve starts and drains it.
    await flood('heard', names);
    const recorded = async () =>
      Number((await inv`select count(*)::int as n from inventory.node where last_seen is not null`)[0]!.n);
    const pids = serverPids();
    // serve drains the queue while it is still starting (startServe returns once its start's re-declare is
    // done): the rate is read from the rows, the first heard written to the last, not from startServe's return.
    const meter = cpuMeter({
      serve: () => (serve ? [serve.child.pid!] : []),
      rabbitmq: () => pids.rabbit,
      postgres: () => serverPids().pg,
    });
    serve = await startServe(mesh, profile);
    while ((await recorded()) < FLEET) await sleep(50);
    const cpu = meter.stop();
    const [span] =
      await inv`select extract(epoch from max(last_seen) - min(last_seen))::float8 as s from inventory.node`;
    // The last batch's own write is not in the span: one batch of the prefetch at most, a floor of a millisecond.
    const drainRate = FLEET / Math.max(span!.s as number, 1e-3);

    // The target offered live: 100,000 nodes a minute, each once, for OFFER_SECONDS.
    const perSecond = 100_000 / 60;
    await inv`update inventory.node set last_seen = null`;
    let sent = 0;
    let maxBacklog = 0;
    const o0 = now();
    const sampler = setInterval(() => {
      void tch.checkQueue(CONTROL_QUEUE).then(
        (q) => {
          maxBacklog = Math.max(maxBacklog, q.messageCount);
        },
        () => {},
      );
    }, 250);
    while (now() - o0 < OFFER_SECONDS * 1000) {
      const due = Math.min(FLEET, Math.floor(((now() - o0) / 1000) * perSecond));
      for (; sent < due; sent++)
        pub.publish(EXCHANGE, 'heard', Buffer.from(names[sent]!), { userId: `${mesh.prefix}node.${names[sent]}` });
      await sleep(20);
    }
    await pub.waitForConfirms();
    const offerEnd = now();
    while ((await recorded()) < sent) await sleep(20);
    const tail = (now() - offerEnd) / 1000;
    clearInterval(sampler);
    await inv.end();
    await imp.close();
    await topo.close();
    await serve.stop();
    serve = undefined;
    const prof = summarizeProfile(profile);
    const bound = `${describeCpu(cpu)}. serve writes one UPDATE per batch of up to ${PREFETCH >> 1} heards (half its prefetch of ${PREFETCH}), one batch at a time, beside its start's re-declare of every node. ${describeProfile('serve', prof)}`;
    figs.push(
      figure({
        id: 'heard.rate',
        what: `heards/s recorded by serve (${FLEET} queued)`,
        value: drainRate,
        unit: '/s',
        limit: {
          what: `raw consume+ack, same queue size, a ${rawKind} queue (mesh.control's type)`,
          value: rawRate,
          unit: '/s',
        },
        target: { text: `>= ${perSecond.toFixed(0)}/s (100,000 nodes a minute)`, met: drainRate >= perSecond },
        bound,
        detail: { cpu, profile: prof },
      }),
    );
    figs.push(
      figure({
        id: 'heard.update',
        what: 'heards/s recorded vs single-row UPDATEs',
        value: drainRate,
        unit: '/s',
        limit: { what: 'raw single-row UPDATE, 32 in flight', value: updateRate, unit: '/s' },
      }),
    );
    figs.push(
      figure({
        id: 'heard.offered',
        what: `backlog at 100,000/min offered for ${OFFER_SECONDS}s`,
        value: maxBacklog,
        unit: 'msgs',
        limit: { what: 'messages offered per second', value: perSecond, unit: 'msgs' },
        target: { text: 'no growing backlog: all recorded within 2s of the last', met: tail < 2 },
        detail: { sent, tailSeconds: tail },
      }),
    );
  } finally {
    await tearDown(mesh, serve, profile);
  }
});
