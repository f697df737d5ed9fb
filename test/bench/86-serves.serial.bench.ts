// 8.6 One serve against two, one broker node against three (issue 19). The
// same three jobs as benches 1-3, from their shared steps (steps.ts), each with
// one and then two `mesh serve` running as competing consumers of
// mesh.control and drainers of the outbox: heards/s (bench 2's ingestion, a
// backlog waiting when the serves start), enrolments/s (bench 1's storm) and
// `mesh declare --all` until every node's queue holds its newest (bench 3's
// fleet). First on the run's single broker node, then on a three-node cluster
// of its own (test/harness/rabbit_cluster.ts; mesh.control and node queues
// quorum there; mesh.control quorum on both). Every figure beside its raw limit measured on the same broker
// just before it: raw consume+ack, the echo's request/reply, raw
// publish+confirm and raw sign; the load average at its start in its name.
import { join } from 'node:path';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { startCluster, type RabbitCluster } from '../harness/rabbit_cluster.js';
import { EXCHANGE, QUORUM } from '../../src/broker/topology.js';
import { envelope } from '../../src/assignment/declare.js';
import { PUBLISH_CHANNELS } from '../../src/serve/drain.js';
import {
  bench, figure, now, sleep, envInt, startServe, tempDir, removeDir, cpuMeter, serverPids, beamPids, describeCpu,
  insertNodes, purgeQueues, settle, perNodeFiles, createQueues, admin, impersonator, loadavg, type Figure,
} from './lib.js';
import { issueTokens, startEcho, connectHosts, storm, flood, rawConsume, composedBodies, signRate, publishAll, declareAll } from './steps.js';

// 2,000 by default: at 10,000 the cluster half did not finish its first
// round within 12 minutes here (quorum node queues made at ~50/s, beams at
// 1.4-1.9 GB each); MESH_BENCH_SERVES_NODES=10000 is issue 19's full size.
const FLEET = envInt('MESH_BENCH_SERVES_NODES', 2_000);
const HEARDS = Math.min(FLEET, envInt('MESH_BENCH_SERVES_HEARDS', 10_000));
const ENROL = envInt('MESH_BENCH_SERVES_ENROL', 200);
const PROCS = envInt('MESH_BENCH_PROCS', 4);
// Bench 3's fleet: 100 sites, each with one dialable node, and two hubs that peer with everyone.
const SITES = envInt('MESH_BENCH_FANOUT_SITES', 100);
const HUBS = envInt('MESH_BENCH_FANOUT_HUBS', 2);
const SERVES = [1, 2];

const t00 = now();
const stage = (what: string) => console.log(`[serves] ${((now() - t00) / 1000).toFixed(1)}s ${what}`);
const load = () => loadavg().split(' ')[0];

/** The three jobs with one serve, then two, on the mesh's broker (the run's, or CLUSTER). */
async function onBroker(where: string, figs: Figure[], rabbitPids: () => number[], cluster?: RabbitCluster): Promise<void> {
  const mesh = await freshMesh({ cluster });
  const root = tempDir('serves-root');
  let serves: Proc[] = [];
  const stopServes = async () => { await Promise.allSettled(serves.map((s) => s.stop())); serves = []; };
  const startServes = async (k: number) => { serves = await Promise.all(Array.from({ length: k }, () => startServe(mesh))); };
  const groups = () => ({ serve: () => serves.map((s) => s.child.pid!), rabbitmq: rabbitPids, postgres: () => serverPids().pg });
  try {
    const names = await insertNodes(mesh, FLEET, { sites: SITES, hubs: HUBS });
    await perNodeFiles(mesh, root);
    // serve declares mesh.control as this broker has it (quorum on a cluster); none runs while a backlog is made.
    await startServes(1);
    await stopServes();
    await createQueues(mesh, names);
    stage(`${where}: ${FLEET} nodes, their queues`);
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
      await flood(pub, mesh, 'heard', heardFrom);
      await startServes(k);
      const h0 = now();
      const hm = cpuMeter(groups());
      for (;;) {
        const [row] = await mesh.store.admin`select count(*)::int as n from inventory.node where last_seen is not null`;
        if (row!.n >= HEARDS) break;
        await sleep(50);
      }
      const heardRate = HEARDS / ((now() - h0) / 1000);
      const hcpu = hm.stop();
      figs.push(figure({ id: `serves.heard.${cluster ? 'cluster' : 'one'}.${k}`, what: `heards/s, ${s(k)} (${HEARDS} queued; load ${l})`, value: heardRate, unit: '/s',
        limit: { what: 'raw consume+ack, same count, same queue type', value: rawRate, unit: '/s' }, bound: describeCpu(hcpu), detail: { cpu: hcpu, load: l } }));
      stage(`${s(k)}: heards ${heardRate.toFixed(0)}/s, raw ${rawRate.toFixed(0)}/s`);

      // declare --all: raw sign and raw publish+confirm (not persistent, as the drain) of the same envelopes to the same queues, then the CLI.
      l = load();
      await purgeQueues(mesh, names);
      await settle(rabbitPids(), 15_000);
      const sign = signRate(mesh, texts);
      const publish = await publishAll(chs, names, envs, false);
      await purgeQueues(mesh, names);
      await settle(rabbitPids(), 15_000);
      const dm = cpuMeter(groups());
      // Every enrolled node: the fleet, and from the second round the hosts the first enrolled.
      const [{ n: owed }] = await mesh.store.admin`select count(*)::int as n from inventory.enrolled_node` as unknown as { n: number }[];
      const { seconds, deliveredSeconds } = await declareAll(mesh, owed);
      const dcpu = dm.stop();
      const drain = owed / Math.max(deliveredSeconds - seconds, 1e-3);
      const rawBoth = owed / sign + owed / publish; // the raw rates of the FLEET envelopes, for as many as declare owed
      figs.push(figure({ id: `serves.declare.${cluster ? 'cluster' : 'one'}.${k}`, what: `declare --all, ${owed} nodes, until every queue holds its newest, ${s(k)} (load ${l})`, value: deliveredSeconds, unit: 's',
        limit: { what: 'raw sign + raw publish+confirm of the same, not persistent', value: rawBoth, unit: 's' },
        bound: `${describeCpu(dcpu)}; the command returned (SQL committed) at ${seconds.toFixed(2)} s`, detail: { seconds, deliveredSeconds, sign, publish, cpu: dcpu, load: l } }));
      figs.push(figure({ id: `serves.drain.${cluster ? 'cluster' : 'one'}.${k}`, what: `drain, declarations/s from the outbox, ${s(k)}`, value: drain, unit: '/s',
        limit: { what: 'raw publish+confirm, same envelopes and queues, not persistent', value: publish, unit: '/s' } }));
      stage(`${s(k)}: declare --all committed ${seconds.toFixed(2)}s, delivered ${deliveredSeconds.toFixed(2)}s; raw sign ${sign.toFixed(0)}/s, publish ${publish.toFixed(0)}/s`);
      // Enrolments: ENROL new hosts, each its own account over pinned TLS; the echo storm, then the enrolment storm.
      l = load();
      const hosts = await issueTokens(mesh, Array.from({ length: ENROL }, (_, i) => `e${k}${String(i + 1).padStart(5, '0')}`));
      const echoer = await startEcho(mesh);
      const workers = await connectHosts(mesh, hosts, PROCS);
      try {
        const echo = await storm(workers, 'echo', groups());
        const enrol = await storm(workers, 'enrol', groups());
        if (enrol.ok !== ENROL) throw new Error(`only ${enrol.ok} of ${ENROL} enrolments were welcomed with ${s(k)}`);
        figs.push(figure({ id: `serves.enrol.${cluster ? 'cluster' : 'one'}.${k}`, what: `enrolments/s, ${s(k)} (${ENROL} at once; load ${l})`, value: enrol.rate, unit: '/s',
          limit: { what: 'raw echo request/reply, same hosts', value: echo.rate, unit: '/s' }, bound: describeCpu(enrol.cpu), detail: { enrol, echo, load: l } }));
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
  await onBroker('one broker node', figs, () => serverPids().rabbit);
  const dir = tempDir('serves-cluster');
  let cluster: RabbitCluster | undefined;
  try {
    cluster = await startCluster(join(dir, 'rabbit'));
    stage('three-node cluster up');
    await onBroker('3-node cluster', figs, () => beamPids((arg) => arg.startsWith(dir)), cluster);
  } finally {
    await cluster?.stop();
    removeDir(dir);
  }
});
