// 8.6 One serve against two, one broker node against three. The
// same three jobs as benches 1-3, from their shared steps (steps.ts), each with
// one and then two `mesh serve` running as competing consumers of
// mesh.control and drainers of the outbox: heards/s (bench 2's ingestion, a
// backlog queued while every serve waits connected, then all let go at once), enrolments/s (bench 1's storm) and
// `mesh declare --all` until every node's queue holds its newest (bench 3's
// fleet). First on the run's single broker node, then on a three-node cluster
// of its own (test/harness/rabbit_cluster.ts; mesh.control and node queues
// quorum there; mesh.control quorum on both). Every figure beside its raw limit measured on the same broker
// just before it: raw consume+ack, the echo's request/reply, raw
// publish+confirm and raw sign; the load average at its start in its name.
import { join } from 'node:path';
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { freshMesh, type Proc } from '../harness/mesh.js';
import { startCluster, type RabbitCluster } from '../harness/rabbit_cluster.js';
import { EXCHANGE, QUORUM } from '../../src/broker/topology.js';
import { envelope } from '../../src/assignment/declare.js';
import { PUBLISH_CHANNELS } from '../../src/serve/drain.js';
import {
  bench,
  figure,
  now,
  sleep,
  envInt,
  startServe,
  tempDir,
  removeDir,
  cpuMeter,
  serverPids,
  beamPids,
  describeCpu,
  purgeQueues,
  settle,
  createQueues,
  admin,
  impersonator,
  loadavg,
  rssOf,
  type Figure,
  fanoutFleet,
} from './lib.js';
import {
  issueTokens,
  startEcho,
  connectHosts,
  storm,
  flood,
  rawConsume,
  composedBodies,
  signRate,
  publishAll,
  declareAll,
} from './steps.js';

// 2,000 by default: on a shared 2-core machine a three-node cluster cannot make
// 10,000 quorum node queues before its Raft members time out
// (cluster_not_formed); MESH_BENCH_SERVES_NODES=10000 is the full size.
const FLEET = envInt('MESH_BENCH_SERVES_NODES', 2_000);
const HEARDS = Math.min(FLEET, envInt('MESH_BENCH_SERVES_HEARDS', 10_000));
const ENROL = envInt('MESH_BENCH_SERVES_ENROL', 200);
const PROCS = envInt('MESH_BENCH_PROCS', 4);
// Bench 3's fleet: 100 sites, each with one dialable node, and two hubs that peer with everyone.
const SITES = envInt('MESH_BENCH_FANOUT_SITES', 100);
const HUBS = envInt('MESH_BENCH_FANOUT_HUBS', 2);
const SERVES = [1, 2];
// Node queues are the bench's setup, not a figure: made and purged over this many channels at once. More
// is not faster on the cluster, and more quorum declares in flight on a loaded machine fail with
// cluster_not_formed (their Raft members do not start in time).
const QUEUE_CHANNELS = envInt('MESH_BENCH_SERVES_QUEUE_CHANNELS', 8);
// Which halves run: both (the figure compared), or only `one` or `cluster` (to time a half's steps at a size).
const ON = process.env.MESH_BENCH_SERVES_ON ?? 'both';

const t00 = now();
let tPrev = t00;
// Also written as it happens to progress.log in the suite's temp dir: the run prints a bench's output only when it ends.
const PROGRESS = join(process.env.MESH_TEST_SUITE_DIR ?? tmpdir(), 'progress.log');
const stage = (what: string) => {
  const line = `[serves] ${((now() - t00) / 1000).toFixed(1)}s (+${((now() - tPrev) / 1000).toFixed(1)}s) ${what}`;
  tPrev = now();
  console.log(line);
  try {
    appendFileSync(PROGRESS, line + '\n');
  } catch {
    /* only a copy */
  }
};
const load = () => loadavg().split(' ')[0];
const brokerRss = (pids: number[]) => pids.map((p) => `${rssOf(p).rssMB.toFixed(0)} MB`).join(' + ');

/** The three jobs with one serve, then two, on the mesh's broker (the run's, or CLUSTER). */
async function onBroker(
  where: string,
  figs: Figure[],
  rabbitPids: () => number[],
  cluster?: RabbitCluster,
): Promise<void> {
  const mesh = await freshMesh({ cluster });
  const root = tempDir('serves-root');
  let serves: Proc[] = [];
  const stopServes = async () => {
    await Promise.allSettled(serves.map((s) => s.stop()));
    serves = [];
  };
  const startServes = async (k: number) => {
    serves = await Promise.all(Array.from({ length: k }, () => startServe(mesh)));
  };
  const groups = () => ({
    serve: () => serves.map((s) => s.child.pid!),
    rabbitmq: rabbitPids,
    postgres: () => serverPids().pg,
  });
  try {
    const names = await fanoutFleet(mesh, FLEET, root, { sites: SITES, hubs: HUBS });
    stage(`${where}: ${FLEET} nodes in SQL`);
    await createQueues(mesh, names, QUEUE_CHANNELS);
    stage(`${where}: ${FLEET} node queues made (${QUEUE_CHANNELS} channels); broker RSS ${brokerRss(rabbitPids())}`);
    // serve declares mesh.control as this broker has it (quorum on a cluster), and at its start declares
    // every node never declared (W2): the fleet as it stands in use, each queue holding its declaration.
    // Made here, not left to the first measured serve (whose drain would fill 10,000 quorum queues during
    // the heards); none runs while a backlog is made.
    await startServes(1);
    for (;;) {
      const [row] = await mesh.store.admin`select count(*)::int as n from assignment.outbox where delivered_at is null`;
      if (row!.n === 0) break;
      await sleep(200);
    }
    await stopServes();
    stage(`${where}: mesh.control declared and every node declared once by a serve`);
    // What the queues cost the broker doing nothing (quorum: a Raft member of each on every broker node, each ticking).
    const idle = cpuMeter({ rabbitmq: rabbitPids });
    await sleep(10_000);
    stage(
      `${where}: broker idle with ${FLEET} node queues: ${(idle.stop().cores.rabbitmq ?? 0).toFixed(2)} cores over 10 s`,
    );
    const conn = await admin(mesh);
    const tch = await conn.createChannel();
    // mesh.control is a quorum queue on one broker node too (src/broker/topology.ts).
    await tch.assertQueue('bench.raw', { durable: true, arguments: { ...QUORUM } });
    await tch.bindQueue('bench.raw', EXCHANGE, 'bench.raw');
    const imp = await impersonator(mesh);
    const pub = await imp.createConfirmChannel();
    const heardFrom = names.slice(0, HEARDS);
    const { texts } = await composedBodies(mesh);
    const envs = texts.map((t) => envelope(t, mesh.signer));
    const chs = await Promise.all(Array.from({ length: PUBLISH_CHANNELS }, () => conn.createConfirmChannel()));
    const s = (k: number) => `${k} serve${k > 1 ? 's' : ''}, ${where}`;

    for (const k of SERVES) {
      // Heards: raw consume+ack of the same count from a queue of the same type, then HEARDS waiting when k serves start.
      let l = load();
      await flood(pub, mesh, 'bench.raw', heardFrom);
      const rawRate = await rawConsume(conn, 'bench.raw', HEARDS);
      await mesh.store.admin`update inventory.node set last_seen = null`;
      stage(`${s(k)}: raw consume+ack ${rawRate.toFixed(0)}/s`);
      // The gate: every serve connected and consuming before one heard is queued, then all let go
      // at one instant, so k serves share the same backlog from its start (a serve started on a
      // waiting backlog drains it while the next one starts). Stopped, each holds at most its
      // prefetch undelivered in its socket; the flood takes seconds, within the heartbeat (15 s, twice).
      await startServes(k);
      // Their start's own work on the broker (topology, policy, the queue listing) done before they are held.
      await settle(rabbitPids(), 15_000);
      stage(`${s(k)}: consuming`);
      const f0 = now();
      for (const sv of serves) sv.child.kill('SIGSTOP');
      let h0: number;
      try {
        await flood(pub, mesh, 'heard', heardFrom);
      } finally {
        h0 = now();
        for (const sv of serves) sv.child.kill('SIGCONT');
      }
      const held = (h0 - f0) / 1000;
      const hm = cpuMeter(groups());
      for (let said = now(); ;) {
        const [row] = await mesh.store.admin`select count(*)::int as n from inventory.node where last_seen is not null`;
        if (row!.n >= HEARDS) break;
        if (now() - said > 30_000) {
          said = now();
          stage(`${s(k)}: ${row!.n} of ${HEARDS} heards recorded so far`);
        }
        await sleep(20);
      }
      const heardRate = HEARDS / ((now() - h0) / 1000);
      const hcpu = hm.stop();
      // Held too long, a serve would have lost its connection and consumed from a second one: not the
      // same race, said in the figure (not thrown: the run's other figures stand).
      const reconnected = serves.filter(
        (sv) => (sv.output().match(/consuming mesh\.control/g)?.length ?? 0) !== 1,
      ).length;
      const caveat = reconnected
        ? `; NOT COMPARABLE: ${reconnected} serve(s) reconnected after being held ${held.toFixed(1)} s`
        : `; serves held ${held.toFixed(1)} s while the backlog was queued`;
      figs.push(
        figure({
          id: `serves.heard.${cluster ? 'cluster' : 'one'}.${k}`,
          what: `heards/s, ${s(k)} (${HEARDS} queued while every serve waited; load ${l})`,
          value: heardRate,
          unit: '/s',
          limit: { what: 'raw consume+ack, same count, same queue type', value: rawRate, unit: '/s' },
          bound: describeCpu(hcpu) + caveat,
          detail: { cpu: hcpu, load: l, heldSeconds: held, reconnected },
        }),
      );
      stage(
        `${s(k)}: heards ${heardRate.toFixed(0)}/s (serves held ${held.toFixed(1)} s while ${HEARDS} were queued), raw ${rawRate.toFixed(0)}/s`,
      );

      // declare --all: raw sign and raw publish+confirm (not persistent, as the drain) of the same envelopes to the same queues, then the CLI.
      l = load();
      await purgeQueues(mesh, names, QUEUE_CHANNELS);
      await settle(rabbitPids(), 15_000);
      stage(`${s(k)}: queues purged, broker settled`);
      const sign = signRate(mesh, texts);
      const publish = await publishAll(chs, names, envs, false);
      stage(`${s(k)}: raw publish+confirm ${publish.toFixed(0)}/s`);
      await purgeQueues(mesh, names, QUEUE_CHANNELS);
      await settle(rabbitPids(), 15_000);
      stage(`${s(k)}: queues purged, broker settled`);
      const dm = cpuMeter(groups());
      // Every enrolled node: the fleet, and from the second round the hosts the first enrolled.
      const [{ n: owed }] = (await mesh.store
        .admin`select count(*)::int as n from inventory.enrolled_node`) as unknown as { n: number }[];
      const { seconds, deliveredSeconds } = await declareAll(mesh, owed);
      const dcpu = dm.stop();
      const drain = owed / Math.max(deliveredSeconds - seconds, 1e-3);
      const rawBoth = owed / sign + owed / publish; // the raw rates of the FLEET envelopes, for as many as declare owed
      figs.push(
        figure({
          id: `serves.declare.${cluster ? 'cluster' : 'one'}.${k}`,
          what: `declare --all, ${owed} nodes, until every queue holds its newest, ${s(k)} (load ${l})`,
          value: deliveredSeconds,
          unit: 's',
          limit: { what: 'raw sign + raw publish+confirm of the same, not persistent', value: rawBoth, unit: 's' },
          bound: `${describeCpu(dcpu)}; the command returned (SQL committed) at ${seconds.toFixed(2)} s`,
          detail: { seconds, deliveredSeconds, sign, publish, cpu: dcpu, load: l },
        }),
      );
      figs.push(
        figure({
          id: `serves.drain.${cluster ? 'cluster' : 'one'}.${k}`,
          what: `drain, declarations/s from the outbox, ${s(k)}`,
          value: drain,
          unit: '/s',
          limit: { what: 'raw publish+confirm, same envelopes and queues, not persistent', value: publish, unit: '/s' },
        }),
      );
      stage(
        `${s(k)}: declare --all committed ${seconds.toFixed(2)}s, delivered ${deliveredSeconds.toFixed(2)}s; raw sign ${sign.toFixed(0)}/s, publish ${publish.toFixed(0)}/s`,
      );
      // Enrolments: ENROL new hosts, each its own account over pinned TLS; the echo storm, then the enrolment storm.
      l = load();
      const hosts = await issueTokens(
        mesh,
        Array.from({ length: ENROL }, (_, i) => `e${k}${String(i + 1).padStart(5, '0')}`),
      );
      const echoer = await startEcho(mesh);
      const workers = await connectHosts(mesh, hosts, PROCS);
      stage(`${s(k)}: ${ENROL} hosts issued tokens and connected`);
      try {
        const echo = await storm(workers, 'echo', groups());
        const enrol = await storm(workers, 'enrol', groups());
        if (enrol.ok !== ENROL) throw new Error(`only ${enrol.ok} of ${ENROL} enrolments were welcomed with ${s(k)}`);
        figs.push(
          figure({
            id: `serves.enrol.${cluster ? 'cluster' : 'one'}.${k}`,
            what: `enrolments/s, ${s(k)} (${ENROL} at once; load ${l})`,
            value: enrol.rate,
            unit: '/s',
            limit: { what: 'raw echo request/reply, same hosts', value: echo.rate, unit: '/s' },
            bound: describeCpu(enrol.cpu),
            detail: { enrol, echo, load: l },
          }),
        );
        stage(`${s(k)}: enrolments ${enrol.rate.toFixed(0)}/s, echo ${echo.rate.toFixed(0)}/s`);
      } finally {
        await Promise.allSettled(workers.map((w) => w.stop()));
        await echoer.close();
      }

      await stopServes();
    }
    await imp.close();
    await conn.close();
  } finally {
    await stopServes();
    await mesh.stop().catch((e) => console.error(`[bench] cleanup: ${(e as Error).message}`));
    removeDir(root);
  }
}

await bench('8.6 one serve against two, one broker against three', async (figs) => {
  if (ON !== 'cluster') await onBroker('one broker node', figs, () => serverPids().rabbit);
  if (ON === 'one') return;
  const dir = tempDir('serves-cluster');
  let cluster: RabbitCluster | undefined;
  try {
    cluster = await startCluster(join(dir, 'rabbit'));
    stage(`three-node cluster up; broker RSS ${brokerRss(beamPids((arg) => arg.startsWith(dir)))}`);
    await onBroker('3-node cluster', figs, () => beamPids((arg) => arg.startsWith(dir)), cluster);
  } finally {
    await cluster?.stop();
    removeDir(dir);
  }
});
