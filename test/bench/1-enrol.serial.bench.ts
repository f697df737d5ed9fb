// 1. Enrolment storm: N hosts, each with its own keys, account and queue,
// enrol at once against a real `mesh serve`. Beside it, measured the same way
// from the same connections: the broker's raw request/reply rate (a trivial
// echo consumer answering on each host's queue), and the management API's
// sequential PUT /users rate, which every enrolment pays once.
import { randomBytes } from 'node:crypto';
import { freshMesh, type Proc } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { queueOf } from '../../src/wire/names.js';
import {
  bench,
  figure,
  now,
  envInt,
  startServe,
  tempDir,
  serverPids,
  describeCpu,
  summarizeProfile,
  describeProfile,
  sequentialMs,
  type Worker,
  tearDown,
} from './lib.js';
import { issueTokens, startEcho, connectHosts, storm as stormOf } from './steps.js';

const N = envInt('MESH_BENCH_ENROL_HOSTS', 200);
const PROCS = envInt('MESH_BENCH_PROCS', 4);

await bench('1 enrolment storm', async (figs) => {
  const mesh = await freshMesh();
  const profile = tempDir('enrol-prof');
  const workers: Worker[] = [];
  let serve: Proc | undefined;
  try {
    const hosts = await issueTokens(
      mesh,
      Array.from({ length: N }, (_, i) => `e${String(i + 1).padStart(5, '0')}`),
    );

    serve = await startServe(mesh, profile);
    const servePid = serve.child.pid!;
    const echoer = await startEcho(mesh);
    const { ch, reply } = echoer;

    const t0 = now();
    workers.push(...(await connectHosts(mesh, hosts, PROCS)));
    console.log(`[enrol] ${N} hosts connected over pinned TLS in ${((now() - t0) / 1000).toFixed(1)}s`);

    const storm = (kind: 'echo' | 'enrol') => {
      const pids = serverPids();
      return stormOf(workers, kind, {
        serve: () => [servePid],
        rabbitmq: () => pids.rabbit,
        postgres: () => serverPids().pg,
      });
    };
    const echo = await storm('echo');
    const enrol = await storm('enrol');
    if (enrol.ok !== N) throw new Error(`only ${enrol.ok} of ${N} enrolments were welcomed`);

    // The steps of one enrolment, each timed alone and one at a time:
    // the management API call (setPassword), a SQL round trip, a confirmed persistent reply.
    const u = encodeURIComponent(`${mesh.prefix}bench-mgmt`);
    const mgmtMs = await sequentialMs(40, async () => {
      const r = await mesh.mgmt('PUT', `/users/${u}`, { password: randomBytes(24).toString('base64url'), tags: '' });
      if (!r.ok) throw new Error(`PUT /users: ${r.status}`);
    });
    const mgmtRate = 1000 / mgmtMs;
    const inv2 = await connect('inventory', { env: mesh.env, max: 1 });
    const sqlMs = await sequentialMs(100, () => inv2`select inventory.mark_heard(${hosts[0]!.name})`);
    await inv2.end();
    const confirmMs = await sequentialMs(
      100,
      () =>
        new Promise<void>((res, rej) =>
          ch.publish('', queueOf(hosts[0]!.name), reply, { persistent: true, type: 'bench.noise' }, (e) =>
            e ? rej(e) : res(),
          ),
        ),
    );
    await echoer.close();
    await serve.stop();
    serve = undefined;
    const prof = summarizeProfile(profile);
    // serve takes different senders at once (one chain per sender) but is one process: one core at most.
    const serveCpuMs = ((enrol.cpu.cores.serve ?? 0) * enrol.cpu.seconds * 1000) / N;
    const bound =
      `${describeCpu(enrol.cpu)}. serve, one process and so one core at most, spent ${serveCpuMs.toFixed(1)} ms of CPU per enrolment ` +
      `(${(1000 / enrol.rate).toFixed(1)} ms of wall time per enrolment in the storm). Each enrolment's own waits, timed alone one at a time: ` +
      `management API PUT /users ${mgmtMs.toFixed(1)} ms, SQL round trip ${sqlMs.toFixed(1)} ms, confirmed persistent reply ${confirmMs.toFixed(1)} ms. ` +
      describeProfile('serve', prof);
    figs.push(
      figure({
        id: 'enrol.rate',
        what: `enrolments/s (${N} hosts at once)`,
        value: enrol.rate,
        unit: '/s',
        limit: { what: 'raw echo request/reply, same hosts', value: echo.rate, unit: '/s' },
        bound,
        detail: { hosts: N, enrol, echo, mgmtMs, sqlMs, confirmMs, profile: prof },
      }),
    );
    figs.push(
      figure({
        id: 'enrol.mgmt',
        what: 'enrolments/s vs sequential mgmt PUT /users',
        value: enrol.rate,
        unit: '/s',
        limit: { what: 'PUT /users one at a time', value: mgmtRate, unit: '/s' },
      }),
    );
    figs.push(
      figure({
        id: 'enrol.p99',
        what: `enrolment latency p99 (storm of ${N})`,
        value: enrol.p99 / 1000,
        unit: 's',
        limit: { what: 'echo p99, same storm', value: echo.p99 / 1000, unit: 's' },
      }),
    );
  } finally {
    await Promise.allSettled(workers.map((w) => w.stop()));
    await tearDown(mesh, serve, profile);
  }
});
