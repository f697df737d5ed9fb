// 1. Enrolment storm: N hosts, each with its own keys, account and queue,
// enrol at once against a real `mesh serve`. Beside it, measured the same way
// from the same connections: the broker's raw request/reply rate (a trivial
// echo consumer answering on each host's queue), and the management API's
// sequential PUT /users rate, which every enrolment pays once.
import { createHash, randomBytes } from 'node:crypto';
import { freshMesh, type Proc } from '../harness/mesh.js';
import { servers } from '../harness/servers.js';
import { connect } from '../../src/store/connect.js';
import { EXCHANGE } from '../../src/broker/topology.js';
import { sender } from '../../src/serve/context.js';
import { queueOf } from '../../src/wire/names.js';
import {
  bench, figure, worker, deal, now, envInt, startServe, tempDir, removeDir, cpuMeter, serverPids, describeCpu,
  summarizeProfile, describeProfile, createAccounts, admin, percentile, sequentialMs, type Worker,
} from './lib.js';

const N = envInt('MESH_BENCH_ENROL_HOSTS', 200);
const PROCS = envInt('MESH_BENCH_PROCS', 4);

await bench('1 enrolment storm', async (figs) => {
  const mesh = await freshMesh();
  const profile = tempDir('enrol-prof');
  const workers: Worker[] = [];
  let serve: Proc | undefined;
  try {
    const s = servers();
    // Tokens as `mesh token issue` makes them: a row and hash in SQL, then the account and queue.
    const hosts = Array.from({ length: N }, (_, i) => ({ name: `e${String(i + 1).padStart(5, '0')}`, password: randomBytes(24).toString('base64url') }));
    const inv = await connect('inventory', { env: mesh.env, max: 4 });
    await Promise.all(hosts.map((h) => inv`select inventory.issue_token(node_name => ${h.name}::text,
      token_hash => ${createHash('sha256').update(h.password).digest()}::bytea, node_site => null::text, node_dialable => null::text, ttl => '1 hour'::interval)`));
    await inv.end();
    await createAccounts(mesh, hosts);

    serve = await startServe(mesh, profile);
    const servePid = serve.child.pid!;
    const conn = await admin(mesh);
    const ch = await conn.createConfirmChannel();
    // The echo: what serve does for a request, minus the work (answer on the sender's queue, confirmed, then ack).
    await ch.assertQueue('bench.echo', { durable: true });
    await ch.bindQueue('bench.echo', EXCHANGE, 'bench.echo');
    await ch.prefetch(1000);
    const reply = Buffer.from(JSON.stringify({ ok: true, mesh: mesh.signer.mesh, node: 'x'.repeat(6), signingKey: 'k'.repeat(44), password: 'p'.repeat(120) }));
    await ch.consume('bench.echo', (msg) => {
      if (!msg) return;
      const from = sender(msg, mesh.prefix);
      ch.publish('', queueOf(from.name), reply, { persistent: true, correlationId: msg.properties.correlationId, type: 'enrol-reply' }, () => ch.ack(msg));
    });

    const user = (n: string) => `${mesh.prefix}node.${n}`;
    const t0 = now();
    for (const part of deal(hosts, PROCS)) {
      const w = worker();
      workers.push(w);
      w.send({ type: 'connect', hosts: part.map((h) => ({ name: h.name, user: user(h.name), password: h.password })),
        broker: { host: '127.0.0.1', port: s.rabbit.amqpsPort, vhost: mesh.vhost, fingerprint: s.rabbit.fingerprint } });
    }
    await Promise.all(workers.map((w) => w.next('ready')));
    console.log(`[enrol] ${N} hosts connected over pinned TLS in ${((now() - t0) / 1000).toFixed(1)}s`);

    const storm = async (kind: 'echo' | 'enrol') => {
      const pids = serverPids();
      const meter = cpuMeter({ serve: () => [servePid], rabbitmq: () => pids.rabbit, postgres: () => serverPids().pg, hosts: () => workers.map((w) => w.child.pid!) });
      workers.forEach((w) => w.send({ type: kind }));
      const done = await Promise.all(workers.map((w) => w.next(`${kind}-done`)));
      const cpu = meter.stop();
      const start = Math.min(...done.map((d) => d.t0));
      const end = Math.max(...done.map((d) => d.t1));
      const ok = done.reduce((a, d) => a + d.ok, 0);
      const lat = done.flatMap((d) => d.lat as number[]).sort((a, b) => a - b);
      return { rate: ok / ((end - start) / 1000), ok, seconds: (end - start) / 1000, p50: percentile(lat, 0.5), p99: percentile(lat, 0.99), cpu };
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
    const confirmMs = await sequentialMs(100, () => new Promise<void>((res, rej) => ch.publish('', queueOf(hosts[0]!.name), reply, { persistent: true, type: 'bench.noise' }, (e) => (e ? rej(e) : res()))));
    await conn.close();
    await serve.stop();
    serve = undefined;
    const prof = summarizeProfile(profile);
    // serve takes different senders at once (one chain per sender) but is one process: one core at most.
    const serveCpuMs = ((enrol.cpu.cores.serve ?? 0) * enrol.cpu.seconds * 1000) / N;
    const bound = `${describeCpu(enrol.cpu)}. serve, one process and so one core at most, spent ${serveCpuMs.toFixed(1)} ms of CPU per enrolment ` +
      `(${(1000 / enrol.rate).toFixed(1)} ms of wall time per enrolment in the storm). Each enrolment's own waits, timed alone one at a time: ` +
      `management API PUT /users ${mgmtMs.toFixed(1)} ms, SQL round trip ${sqlMs.toFixed(1)} ms, confirmed persistent reply ${confirmMs.toFixed(1)} ms. ` +
      describeProfile('serve', prof);
    figs.push(figure({
      id: 'enrol.rate', what: `enrolments/s (${N} hosts at once)`, value: enrol.rate, unit: '/s',
      limit: { what: 'raw echo request/reply, same hosts', value: echo.rate, unit: '/s' },
      bound, detail: { hosts: N, enrol, echo, mgmtMs, sqlMs, confirmMs, profile: prof },
    }));
    figs.push(figure({
      id: 'enrol.mgmt', what: 'enrolments/s vs sequential mgmt PUT /users', value: enrol.rate, unit: '/s',
      limit: { what: 'PUT /users one at a time', value: mgmtRate, unit: '/s' },
    }));
    figs.push(figure({
      id: 'enrol.p99', what: `enrolment latency p99 (storm of ${N})`, value: enrol.p99 / 1000, unit: 's',
      limit: { what: 'echo p99, same storm', value: echo.p99 / 1000, unit: 's' },
    }));
  } finally {
    await Promise.allSettled(workers.map((w) => w.stop()));
    await serve?.stop();
    await mesh.stop().catch((e) => console.error(`[bench] cleanup: ${(e as Error).message}`));
    removeDir(profile);
  }
});
