// Bench 3's body, at the size its file gives (3-fanout: 10,000; 3x-fanout-large:
// 100,000). Fan-out: `mesh declare --all` for N enrolled nodes (compose in SQL,
// sign, record and owe in the outbox), the real CLI (timed bare, then profiled in a
// second run), and serve's drain publishing what it owes with confirms until every
// queue holds its newest: in the first run as the command's parts commit, in the
// second from a backlog of all (the drain held while the command ran), its own rate. Beside it, in
// the same run: the raw Ed25519 sign rate over bodies of the same size with the
// same key, and the raw publish-with-confirms rate of envelopes of the same size
// to the same N queues. Then (5a) the RSS of `mesh serve` at N nodes,
// once it has heard from every one of them.
import { freshMesh, type Proc } from '../harness/mesh.js';
import { EXCHANGE } from '../../src/broker/topology.js';
import { envelope } from '../../src/assignment/declare.js';
import { PUBLISH_CHANNELS } from '../../src/serve/drain.js';
import { LIMITS } from '../../src/wire/envelope.js';
import {
  type Figure,
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
  purgeQueues,
  deleteQueues,
  settle,
  createQueues,
  admin,
  impersonator,
  rssOf,
  bareNodeRss,
  tearDown,
  fanoutFleet,
  brokerWatermark,
  brokerMemory,
} from './lib.js';
import { composedBodies, signRate as signRateOf, publishAll, declareAll } from './steps.js';

// A fleet's overlay: 100 sites, each with one dialable node, and two hubs that peer with everyone.
const SITES = envInt('MESH_BENCH_FANOUT_SITES', 100);
const HUBS = envInt('MESH_BENCH_FANOUT_HUBS', 2);

export async function fanout(N: number, figs: Figure[]): Promise<void> {
  const DELIVERED_TARGET = N > 10_000 ? 30 : 5;
  const mesh = await freshMesh();
  const profile = tempDir('fanout-prof');
  const root = tempDir('fanout-root');
  let serve: Proc | undefined;
  let names: string[] = [];
  const t00 = now();
  const stage = (what: string) => console.log(`[fan-out] ${((now() - t00) / 1000).toFixed(1)}s ${what}`);
  try {
    names = await fanoutFleet(mesh, N, root, { sites: SITES, hubs: HUBS });
    stage(`${N} nodes in SQL, ${SITES} sites, ${HUBS} hubs`);
    // 100,000 queues hold about 12 GB of the broker's memory: set as an operator would for such a fleet.
    if (N > 10_000) await brokerWatermark(0.8);
    await createQueues(mesh, names);
    stage(`${N} queues`);
    serve = await startServe(mesh);
    const servePid = serve.child.pid!;
    const idleServe = rssOf(servePid);

    // What one declaration is: a body of the real size, from the one composing path.
    const { texts, seconds: composeSeconds } = await composedBodies(mesh);
    stage(`composed ${N} in ${composeSeconds.toFixed(2)}s`);
    const bodies = texts.map((t) => Buffer.from(t, 'utf8'));

    // Raw sign: the same key over the same bodies.
    const signRate = signRateOf(mesh, texts);

    // Raw publish with confirms: the same envelopes to the same queues, all at once, over as many confirm
    // channels as declare uses. Then the same not persistent: the difference is the broker's disk path.
    const envs = texts.map((t) => envelope(t, mesh.signer));
    const conn = await admin(mesh);
    const chs = await Promise.all(Array.from({ length: PUBLISH_CHANNELS }, () => conn.createConfirmChannel()));
    const rabbitPids = serverPids().rabbit;
    const rawPublish = async (persistent: boolean, channels = chs.length) => {
      await settle(rabbitPids);
      const m = cpuMeter({ rabbitmq: () => rabbitPids });
      const rate = await publishAll(chs.slice(0, channels), names, envs, persistent);
      const out = { rate, cpu: m.stop() };
      await purgeQueues(mesh, names);
      stage(`raw publish${persistent ? ', persistent' : ''} over ${channels} channel(s): ${rate.toFixed(0)}/s; purged`);
      return out;
    };
    // The first message a queue ever holds costs the broker more (its index files are made): the limit is
    // a later round, queues in the state declare finds them in (used, emptied, the broker idle). Past
    // 10,000 nodes one round, the drain's own mode: each round's purge asks 100,000 queues in turn.
    const large = N > 10_000;
    const cold = large ? undefined : await rawPublish(true);
    const persistent = large ? undefined : await rawPublish(true);
    const oneChannel = large ? undefined : await rawPublish(true, 1);
    const transient = await rawPublish(false);
    // The drain's delivery mode (W3): not persistent.
    const publishRate = transient.rate;
    stage('raw sign and publish');
    const rawBoth = 1 / (1 / signRate + 1 / publishRate);

    // The real thing: `mesh declare --all` on a broker done with the raw rounds. The figures come from
    // a run with no profiler attached (a sampling profiler slows the Node side it samples); a second
    // run, profiled, once the first is delivered, says where the command's time goes.
    const settled = await settle(rabbitPids);
    stage(`broker idle after ${settled.toFixed(1)}s`);
    const pids = serverPids();
    const meter = cpuMeter({ rabbitmq: () => pids.rabbit, postgres: () => serverPids().pg });
    const { seconds, deliveredSeconds } = await declareAll(mesh, N);
    const cpu = meter.stop();
    const rate = N / deliveredSeconds;
    stage(
      `declare --all: committed in ${seconds.toFixed(2)}s, every queue holds its newest at ${deliveredSeconds.toFixed(2)}s`,
    );
    await settle(rabbitPids);
    // Profiled, the drain held until the command returned: the drain's own rate, a backlog of N at once.
    const profiled = await declareAll(mesh, N, profile, {
      serve: () => [servePid],
      rabbitmq: () => pids.rabbit,
      postgres: () => serverPids().pg,
    });
    const drainSeconds = profiled.drainSeconds;
    stage(`declare --all again, profiled: committed in ${profiled.seconds.toFixed(2)}s`);
    const prof = summarizeProfile(profile);
    const profiledSaid = `A second run under --cpu-prof took ${profiled.seconds.toFixed(2)}s; its profile: `;

    figs.push(
      figure({
        id: 'fanout.seconds',
        what: `mesh declare --all returns (SQL committed), ${N} nodes`,
        value: seconds,
        unit: 's',
        limit: { what: 'raw sign for the same', value: N / signRate, unit: 's' },
        target: { text: '< 3 s', met: seconds < 3 },
        bound: `compose of all ${N} alone takes ${composeSeconds.toFixed(2)}s in SQL. ${profiledSaid}${describeProfile('mesh declare', prof)}`,
        detail: { profiledSeconds: profiled.seconds },
      }),
    );
    figs.push(
      figure({
        id: 'fanout.delivered',
        what: `every node's queue holds its newest, from the command's start`,
        value: deliveredSeconds,
        unit: 's',
        limit: {
          what: 'command + raw publish of the same, not persistent',
          value: seconds + N / transient.rate,
          unit: 's',
        },
        // 5 s at 10,000 nodes; 30 s at 100,000 (the fleet a hub's declaration must still fit, O4).
        target: { text: `< ${DELIVERED_TARGET} s`, met: deliveredSeconds < DELIVERED_TARGET },
      }),
    );
    figs.push(
      figure({
        id: 'fanout.drain',
        what: `serve's drain: declarations/s published from the outbox (a backlog of every node's, the drain held while the command ran)`,
        value: N / drainSeconds,
        unit: '/s',
        limit: {
          what: 'raw publish+confirm, same envelopes and queues, not persistent',
          value: transient.rate,
          unit: '/s',
        },
        target: { text: '>= 0.7 of raw, same delivery mode', met: N / drainSeconds >= 0.7 * transient.rate },
        bound:
          `the drain's window, first publish confirmed to last, ${drainSeconds.toFixed(2)} s: ${describeCpu(profiled.drainCpu!)}` +
          (persistent
            ? `; persistent, the raw rate would be ${persistent.rate.toFixed(0)}/s (the broker's disk path): the drain publishes not persistent (W3)`
            : `; the raw round is the drain's own mode, not persistent (W3)`),
      }),
    );
    figs.push(
      figure({
        id: 'fanout.rate',
        what: `declarations/s (compose, sign, record, publish)`,
        value: rate,
        unit: '/s',
        limit: { what: 'raw sign+publish, serial composition', value: rawBoth, unit: '/s' },
        target: { text: '>= 0.5 of raw sign+publish', met: rate >= 0.5 * rawBoth },
        bound:
          `${describeCpu(cpu)}; compose of all ${N} alone takes ${composeSeconds.toFixed(2)}s in SQL. ${profiledSaid}${describeProfile('mesh declare', prof)}` +
          (N / publishRate >= 5
            ? `. The raw publish of the same ${N} alone takes ${(N / publishRate).toFixed(1)}s: over the target before composing or signing`
            : ''),
        detail: {
          cpu,
          profile: prof,
          composeSeconds,
          bodyBytes: {
            total: bodies.reduce((a, b) => a + b.length, 0),
            largest: Math.max(...bodies.map((b) => b.length)),
          },
        },
      }),
    );
    figs.push(
      figure({
        id: 'fanout.sign',
        what: 'declarations/s vs raw Ed25519 sign',
        value: rate,
        unit: '/s',
        limit: { what: 'raw sign, same key and bodies', value: signRate, unit: '/s' },
      }),
    );
    figs.push(
      figure({
        id: 'fanout.publish',
        what: 'declarations/s vs raw publish+confirm',
        value: rate,
        unit: '/s',
        limit: { what: 'raw publish+confirm, same queues, not persistent', value: publishRate, unit: '/s' },
        bound:
          persistent && cold && oneChannel
            ? `raw persistent publish: ${describeCpu(persistent.cpu)}; to queues that never held a message: ${cold.rate.toFixed(0)}/s; over one channel instead of ${PUBLISH_CHANNELS}: ${oneChannel.rate.toFixed(0)}/s, ${describeCpu(oneChannel.cpu)}; the same not persistent: ${transient.rate.toFixed(0)}/s, ${describeCpu(transient.cpu)}`
            : `raw publish, not persistent: ${describeCpu(transient.cpu)}`,
        detail: { cold, persistent, oneChannel, transient },
      }),
    );

    // A hub's declaration at this fleet (O4): the largest envelope beside the limit every declaration has.
    const [hub] = await mesh.store
      .admin`select d.node, length(d.envelope)::int as bytes, (select count(*)::int from overlay.hub) as hubs
                                           from assignment.declaration d join overlay.hub h on h.node = d.node
                                          order by length(d.envelope) desc limit 1`;
    if (hub)
      figs.push(
        figure({
          id: 'fanout.hub',
          what: `the largest hub's signed declaration, ${N} nodes and ${hub.hubs} hubs`,
          value: hub.bytes / 1e6,
          unit: 'MB',
          limit: { what: 'the size limit of every declaration', value: LIMITS.declaration / 1e6, unit: 'MB' },
          target: { text: 'under the limit', met: hub.bytes <= LIMITS.declaration },
        }),
      );
    const [db] = await mesh.store.admin`select pg_database_size(current_database())::float8 as bytes`;
    figs.push(
      figure({
        id: 'memory.pg',
        what: `PostgreSQL's database size per node, ${N} nodes declared twice`,
        value: db!.bytes / N / 1024,
        unit: 'KB',
        detail: { databaseMB: db!.bytes / 1e6 },
      }),
    );

    // 5a: serve at N nodes, having heard from every one (the heard path is the one that touches every node).
    const imp = await impersonator(mesh);
    const pub = await imp.createConfirmChannel();
    for (const n of names) pub.publish(EXCHANGE, 'heard', Buffer.from(n), { userId: `${mesh.prefix}node.${n}` });
    await pub.waitForConfirms();
    for (;;) {
      const [row] = await mesh.store.admin`select count(*)::int as n from inventory.node where last_seen is not null`;
      if (row!.n >= N) break;
      await sleep(100);
    }
    await sleep(1000);
    const busyServe = rssOf(servePid);
    const broker = await brokerMemory();
    const bare = await bareNodeRss();
    await imp.close();
    await conn.close();
    figs.push(
      figure({
        id: 'memory.serve',
        what: `mesh serve RSS at ${N} nodes (after a heard from each), ${((busyServe.rssMB * 1024) / N).toFixed(1)} KB a node`,
        value: busyServe.rssMB,
        unit: 'MB',
        limit: { what: 'a bare node process', value: bare, unit: 'MB' },
        detail: { idleAtStart: idleServe, afterHeards: busyServe },
      }),
    );
    figs.push(
      figure({
        id: 'memory.broker',
        what: `the broker's memory at ${broker.queues} queues, ${((broker.usedMB * 1000) / broker.queues).toFixed(0)} KB a queue`,
        value: broker.usedMB,
        unit: 'MB',
        limit: {
          what: 'the memory it may use before it blocks publishers (its watermark)',
          value: broker.limitMB,
          unit: 'MB',
        },
      }),
    );
  } finally {
    await serve?.stop();
    serve = undefined;
    // The benches after this one run on a broker without these queues, at its default limit.
    if (N > 10_000) {
      const t = now();
      await deleteQueues(mesh, names);
      stage(`${names.length} queues deleted in ${((now() - t) / 1000).toFixed(1)}s`);
      await brokerWatermark(0.4);
    }
    await tearDown(mesh, serve, profile, root);
  }
}
