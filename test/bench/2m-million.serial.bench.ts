// 2m. Heards from 1,000,000 nodes a minute (16,667 /s), offered live to two
// serves sharing mesh.control, as a fleet of that size would send them: how
// far the backlog grows, how long after the last heard every one is
// recorded, and each serve's CPU while it absorbs them. Beside it, in the
// same run: the same offer to a queue of mesh.control's type, absorbed by as
// many consumers that only ack, each holding as many unacked as a serve. The serves start on an empty fleet
// and the 1,000,000 nodes are rows made after (a serve's start composes
// every enrolled node; at this size that is not what is measured here).
import { freshMesh, type Proc } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { declareTopology, CONTROL_QUEUE, EXCHANGE } from '../../src/broker/topology.js';
import {
  bench,
  figure,
  now,
  sleep,
  envInt,
  startServe,
  cpuMeter,
  serverPids,
  describeCpu,
  insertNodes,
  impersonator,
  admin,
  tearDown,
} from './lib.js';
import { rawQueue } from './steps.js';
import { PREFETCH } from '../../src/serve/intake.js';

const FLEET = envInt('MESH_BENCH_MILLION_NODES', 1_000_000);
const OFFER_SECONDS = envInt('MESH_BENCH_MILLION_OFFER_SECONDS', 15);
const SERVES = 2;
const PER_SECOND = FLEET / 60;

await bench('2m heards from 1,000,000 nodes a minute', async (figs) => {
  const mesh = await freshMesh();
  const serves: Proc[] = [];
  const t00 = now();
  const stage = (what: string) => console.log(`[million] ${((now() - t00) / 1000).toFixed(1)}s ${what}`);
  try {
    const topo = await admin(mesh);
    const tch = await topo.createChannel();
    await declareTopology(topo);
    const rawKind = await rawQueue(topo, 'bench.raw');
    for (let i = 0; i < SERVES; i++) serves.push(await startServe(mesh));
    stage(`${SERVES} serves consuming`);
    const names = await insertNodes(mesh, FLEET);
    // A running fleet: every node heard a minute ago, as it is when its next heard comes (a first heard
    // also tells the console, once a node; that is enrolment's cost, not the steady minute's).
    await mesh.store.admin`update inventory.node set last_seen = now() - interval '1 minute'`;
    await mesh.store.admin`vacuum analyze inventory.node`;
    stage(`${FLEET} nodes in SQL, each heard a minute ago`);
    const offered = names.slice(0, Math.min(FLEET, Math.ceil(PER_SECOND * OFFER_SECONDS)));

    // Heards from many nodes over one connection: an impersonator sets each node's user_id, as its own connection would.
    const imp = await impersonator(mesh);
    const pub = await imp.createConfirmChannel();

    const pids = serverPids();
    const meter = () =>
      cpuMeter({
        ...Object.fromEntries(serves.map((s, i) => [`serve ${i + 1}`, () => [s.child.pid!]])),
        rabbitmq: () => pids.rabbit,
        postgres: () => serverPids().pg,
        'this bench (publisher, raw consumers)': () => [process.pid],
      });

    /**
     * OFFERED published with KEY as the fleet sends them, each node once, PER_SECOND a second in
     * small bursts, QUEUE's backlog sampled; then until DONE() says every one is absorbed.
     */
    const offer = async (key: string, queue: string, done: () => Promise<boolean>) => {
      let sent = 0;
      let maxBacklog = 0;
      const backlog: { at: number; n: number }[] = [];
      const m = meter();
      const o0 = now();
      const sampler = setInterval(() => {
        const at = (now() - o0) / 1000;
        void tch.checkQueue(queue).then(
          (q) => {
            backlog.push({ at, n: q.messageCount });
            maxBacklog = Math.max(maxBacklog, q.messageCount);
          },
          () => {},
        );
      }, 250);
      while (sent < offered.length) {
        const due = Math.min(offered.length, Math.floor(((now() - o0) / 1000) * PER_SECOND));
        for (; sent < due; sent++)
          pub.publish(EXCHANGE, key, Buffer.from(offered[sent]!), { userId: `${mesh.prefix}node.${offered[sent]}` });
        await sleep(10);
      }
      await pub.waitForConfirms();
      const offerEnd = now();
      while (!(await done())) await sleep(100);
      const tail = (now() - offerEnd) / 1000;
      const cpu = m.stop();
      clearInterval(sampler);
      const offerSeconds = (offerEnd - o0) / 1000;
      // Growing: the backlog in the offer's last second against its first.
      const during = (from: number, to: number) =>
        Math.max(0, ...backlog.filter((b) => b.at >= from && b.at < to).map((b) => b.n));
      return {
        sent,
        offeredRate: sent / offerSeconds,
        absorbed: sent / (offerSeconds + tail),
        tail,
        maxBacklog,
        grew: during(offerSeconds - 1, offerSeconds) - during(0, 1),
        backlog,
        cpu,
      };
    };

    // The limit: the same offer to a queue of mesh.control's type, absorbed by as many consumers as
    // serves that only ack, each holding as many unacked as a serve (PREFETCH).
    const rawConn = await admin(mesh);
    let rawAcked = 0;
    for (let i = 0; i < SERVES; i++) {
      const ch = await rawConn.createChannel();
      await ch.prefetch(PREFETCH);
      await ch.consume('bench.raw', (msg) => {
        if (!msg) return;
        ch.ack(msg);
        rawAcked++;
      });
    }
    const raw = await offer('bench.raw', 'bench.raw', async () => rawAcked >= offered.length);
    await rawConn.close();
    stage(
      `raw: ${raw.sent} offered at ${raw.offeredRate.toFixed(0)}/s; every one acked ${raw.tail.toFixed(2)}s after the last`,
    );

    const inv = await connect('inventory', { env: mesh.env, max: 1 });
    const [start] = await inv`select now() as t`;
    const recorded = async () =>
      Number((await inv`select count(*)::int as n from inventory.node where last_seen >= ${start!.t}`)[0]!.n);
    // Counting a million rows is a scan: asked only once mesh.control holds nothing more to hand out.
    const real = await offer(
      'heard',
      CONTROL_QUEUE,
      async () => (await tch.checkQueue(CONTROL_QUEUE)).messageCount === 0 && (await recorded()) >= offered.length,
    );
    const { sent, offeredRate, tail, cpu, maxBacklog, grew, backlog } = real;
    stage(`${sent} offered at ${offeredRate.toFixed(0)}/s; every one recorded ${tail.toFixed(2)}s after the last`);
    await inv.end();
    await imp.close();
    await topo.close();

    const absorbed = real.absorbed;
    const serveCores = serves.map((_, i) => cpu.cores[`serve ${i + 1}`] ?? 0);
    figs.push(
      figure({
        id: 'heard.million',
        what: `heards/s absorbed by ${SERVES} serves, ${FLEET} nodes a minute offered for ${OFFER_SECONDS}s (offered at ${offeredRate.toFixed(0)}/s)`,
        value: absorbed,
        unit: '/s',
        limit: {
          what: `the same offer to a ${rawKind} queue (mesh.control's type), ${SERVES} consumers that only ack, ${PREFETCH} unacked each (offered at ${raw.offeredRate.toFixed(0)}/s, its backlog at most ${raw.maxBacklog}, all acked ${raw.tail.toFixed(2)}s after the last)`,
          value: raw.absorbed,
          unit: '/s',
        },
        target: {
          text: `>= ${PER_SECOND.toFixed(0)}/s offered and absorbed, no backlog: all recorded within 2s of the last`,
          met: offeredRate >= 0.98 * PER_SECOND && tail < 2,
        },
        bound: `${describeCpu(cpu)}; the raw offer: ${describeCpu(raw.cpu)}`,
        detail: { sent, offeredRate, tailSeconds: tail, cpu, raw: { ...raw, backlog: undefined } },
      }),
    );
    figs.push(
      figure({
        id: 'heard.million.backlog',
        what: `mesh.control's largest backlog while ${PER_SECOND.toFixed(0)}/s were offered (${grew} more in the offer's last second than its first)`,
        value: maxBacklog,
        unit: 'msgs',
        limit: { what: 'heards offered a second', value: PER_SECOND, unit: 'msgs' },
        target: { text: 'under a second of heards', met: maxBacklog < PER_SECOND },
        detail: { samples: backlog },
      }),
    );
    serveCores.forEach((cores, i) =>
      figs.push(
        figure({
          id: `heard.million.serve${i + 1}`,
          what: `serve ${i + 1}'s CPU while absorbing, ${(((cores * cpu.seconds) / sent) * 1e6).toFixed(1)} µs of it a heard offered`,
          value: cores,
          unit: 'cores',
          limit: { what: 'the machine', value: 2, unit: 'cores' },
        }),
      ),
    );
  } finally {
    await Promise.allSettled(serves.map((s) => s.stop()));
    await tearDown(mesh, undefined);
  }
});
