// The measured steps more than one bench runs: the enrolment storm and its
// echo (bench 1), flooding heards and the raw consume beside them (bench 2),
// composing and `mesh declare --all` until every queue holds its newest
// (bench 3). Each takes the mesh it runs on, so the same step runs against the
// run's broker or a cluster (bench 8.6).
import { createHash, randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import type amqp from 'amqplib';
import { MESH, type Mesh } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { EXCHANGE, CONTROL_QUEUE, QUORUM, kindOf } from '../../src/broker/topology.js';
import { sender } from '../../src/serve/context.js';
import { queueOf } from '../../src/wire/names.js';
import { bodyText, fresh } from '../../src/wire/declaration.js';
import { sign } from '../../src/crypto/sign.js';
import {
  worker,
  deal,
  now,
  sleep,
  cpuMeter,
  createAccounts,
  admin,
  percentile,
  type Worker,
  type CpuShare,
} from './lib.js';

export interface EnrolHost {
  name: string;
  password: string;
}

/** Tokens as `mesh token issue` makes them (a row and hash in SQL), then each node's account and queue. */
export async function issueTokens(mesh: Mesh, names: string[]): Promise<EnrolHost[]> {
  const hosts = names.map((name) => ({ name, password: randomBytes(24).toString('base64url') }));
  const inv = await connect('inventory', { env: mesh.env, max: 4 });
  await Promise.all(
    hosts.map(
      (h) => inv`select inventory.issue_token(node_name => ${h.name}::text,
    token_hash => ${createHash('sha256').update(h.password).digest()}::bytea, node_site => null::text, node_dialable => null::text, ttl => '1 hour'::interval)`,
    ),
  );
  await inv.end();
  await createAccounts(mesh, hosts);
  return hosts;
}

/** The echo: what serve does for an enrolment request, minus the work (answer on the sender's queue, confirmed, then ack). */
export async function startEcho(
  mesh: Mesh,
): Promise<{ ch: amqp.ConfirmChannel; reply: Buffer; close(): Promise<void> }> {
  const conn = await admin(mesh);
  const ch = await conn.createConfirmChannel();
  await ch.assertQueue('bench.echo', { durable: true });
  await ch.bindQueue('bench.echo', EXCHANGE, 'bench.echo');
  await ch.prefetch(1000);
  const reply = Buffer.from(
    JSON.stringify({
      ok: true,
      mesh: mesh.signer.mesh,
      node: 'x'.repeat(6),
      signingKey: 'k'.repeat(44),
      password: 'p'.repeat(120),
    }),
  );
  await ch.consume('bench.echo', (msg) => {
    if (!msg) return;
    const from = sender(msg, mesh.prefix);
    ch.publish(
      '',
      queueOf(from.name),
      reply,
      { persistent: true, correlationId: msg.properties.correlationId, type: 'enrol-reply' },
      () => ch.ack(msg),
    );
  });
  return { ch, reply, close: () => conn.close() };
}

/** The hosts in PROCS simulated-host processes, each connected with its own account over pinned TLS (the mesh's public broker address). */
export async function connectHosts(mesh: Mesh, hosts: EnrolHost[], procs: number): Promise<Worker[]> {
  const [host, port] = mesh.broker.public.split(':');
  const broker = { host: host!, port: Number(port), vhost: mesh.vhost, fingerprint: mesh.broker.fingerprint };
  const workers: Worker[] = [];
  for (const part of deal(hosts, procs)) {
    const w = worker();
    workers.push(w);
    w.send({
      type: 'connect',
      hosts: part.map((h) => ({ name: h.name, user: `${mesh.prefix}node.${h.name}`, password: h.password })),
      broker,
    });
  }
  await Promise.all(workers.map((w) => w.next('ready')));
  return workers;
}

export interface Storm {
  rate: number;
  ok: number;
  seconds: number;
  p50: number;
  p99: number;
  cpu: CpuShare;
}

/** Every host sends at once (an enrolment, or the echo's request) and waits for its answer; GROUPS are metered beside the hosts. */
export async function storm(
  workers: Worker[],
  kind: 'echo' | 'enrol',
  groups: Record<string, () => number[]>,
): Promise<Storm> {
  const meter = cpuMeter({ ...groups, hosts: () => workers.map((w) => w.child.pid!) });
  workers.forEach((w) => w.send({ type: kind }));
  const done = await Promise.all(workers.map((w) => w.next(`${kind}-done`)));
  const cpu = meter.stop();
  const start = Math.min(...done.map((d) => d.t0));
  const end = Math.max(...done.map((d) => d.t1));
  const ok = done.reduce((a, d) => a + d.ok, 0);
  const lat = done.flatMap((d) => d.lat as number[]).sort((a, b) => a - b);
  return {
    rate: ok / ((end - start) / 1000),
    ok,
    seconds: (end - start) / 1000,
    p50: percentile(lat, 0.5),
    p99: percentile(lat, 0.99),
    cpu,
  };
}

/** Heards from many nodes over one impersonator connection (user_id set to each node's account), confirmed 2,000 at a time. */
export async function flood(pub: amqp.ConfirmChannel, mesh: Mesh, key: string, names: string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 2000) {
    for (const n of names.slice(i, i + 2000))
      pub.publish(EXCHANGE, key, Buffer.from(n), { userId: `${mesh.prefix}node.${n}` });
    await pub.waitForConfirms();
  }
}

/**
 * The raw consume's queue, declared of mesh.control's type (quorum since issue
 * 19) and bound to its own name: a limit read from a classic queue would
 * measure a cheaper queue than the one serve consumes. Says the type it took.
 */
export async function rawQueue(conn: amqp.ChannelModel, queue: string): Promise<'quorum' | 'classic'> {
  const kind = await kindOf(conn, CONTROL_QUEUE);
  if (kind === 'absent')
    throw new Error(`${CONTROL_QUEUE} does not exist: declare the topology first, the raw queue takes its type.`);
  const ch = await conn.createChannel();
  try {
    await ch.assertQueue(queue, { durable: true, ...(kind === 'quorum' ? { arguments: { ...QUORUM } } : {}) });
    await ch.bindQueue(queue, EXCHANGE, queue);
  } finally {
    await ch.close();
  }
  return kind;
}

/** Raw consume: a consumer that only acks, prefetch as serve's, until COUNT arrived; messages/s. */
export async function rawConsume(conn: amqp.ChannelModel, queue: string, count: number): Promise<number> {
  const ch = await conn.createChannel();
  await ch.prefetch(1000);
  let got = 0;
  const t0 = now();
  const t1 = await new Promise<number>((resolve) => {
    void ch.consume(queue, (m) => {
      if (!m) return;
      ch.ack(m);
      if (++got === count) resolve(now());
    });
  });
  await ch.close();
  return count / ((t1 - t0) / 1000);
}

/** What each declaration is: every node's body of the real size, from the one composing path. */
export async function composedBodies(mesh: Mesh): Promise<{ texts: string[]; seconds: number }> {
  const asg = await connect('assignment', { env: mesh.env, max: 1 });
  try {
    const t0 = now();
    await asg`select overlay.allocate_addresses()`;
    const composed = await asg`select node, resources::text as resources from assignment.compose_each(null)`;
    const seconds = (now() - t0) / 1000;
    return {
      texts: composed.map((r) => bodyText(mesh.signer.mesh, r.node as string, 1, r.resources, fresh())),
      seconds,
    };
  } finally {
    await asg.end();
  }
}

/** Raw Ed25519 sign of the same bodies with the same key: signatures/s. */
export function signRate(mesh: Mesh, texts: string[]): number {
  const bodies = texts.map((t) => Buffer.from(t, 'utf8'));
  const t0 = now();
  for (const b of bodies) sign(b, mesh.signer.secret);
  return bodies.length / ((now() - t0) / 1000);
}

/** Publish ENVS with confirms to each node's queue over CHS (round robin): messages/s. */
export async function publishAll(
  chs: amqp.ConfirmChannel[],
  names: string[],
  envs: Buffer[],
  persistent: boolean,
): Promise<number> {
  const t0 = now();
  await Promise.all(
    envs.map(
      (e, i) =>
        new Promise<void>((res, rej) =>
          chs[i % chs.length]!.publish(
            '',
            `node.${names[i]}`,
            e,
            { persistent, mandatory: true, type: 'bench.noise' },
            (err) => (err ? rej(err) : res()),
          ),
        ),
    ),
  );
  return envs.length / ((now() - t0) / 1000);
}

/**
 * The real CLI `mesh declare --all --json` (profiled into PROFILE when given):
 * seconds until it returned (SQL committed, W1), and until serve's drain had
 * every outbox row confirmed (every node's queue holds its newest). With HOLD,
 * the drain is held while the command runs (each owed row made due at
 * infinity by a trigger of this throwaway database; serve runs on, connected)
 * and let go once it returned: it then publishes a backlog of every
 * declaration at its own pace, not the command's, its CPU metered over HOLD's
 * groups from then.
 */
export async function declareAll(
  mesh: Mesh,
  expect: number,
  profile?: string,
  hold?: Parameters<typeof cpuMeter>[0],
): Promise<{ seconds: number; deliveredSeconds: number; drainSeconds: number; drainCpu?: CpuShare }> {
  if (hold)
    await mesh.store.admin.unsafe(`
      create function public.bench_hold_drain() returns trigger language plpgsql as $$
        begin new.next_attempt_at := 'infinity'; return new; end $$;
      create trigger bench_hold_drain before insert on assignment.outbox for each row execute function public.bench_hold_drain()`);
  const d0 = now();
  // Node's own flags go before the script, so not through runCli (and NODE_OPTIONS refuses --cpu-prof).
  const args = [...(profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : []), MESH, 'declare', '--all', '--json'];
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, args, { env: mesh.env, maxBuffer: 256 << 20 }, (err, stdout, stderr) =>
      resolve({
        code: err ? ((err as { code?: number }).code ?? 1) : 0,
        stdout: String(stdout),
        stderr: String(stderr),
      }),
    );
  });
  const seconds = (now() - d0) / 1000;
  // The CPU of the drain alone, from the moment serve is let go.
  if (hold)
    await mesh.store.admin.unsafe(`
      drop trigger bench_hold_drain on assignment.outbox;
      drop function public.bench_hold_drain();
      update assignment.outbox set next_attempt_at = now() where delivered_at is null and next_attempt_at = 'infinity'`);
  const drainMeter = hold && cpuMeter(hold);
  if (hold) await mesh.store.admin`select pg_notify('mesh_outbox', '')`;
  if (r.code !== 0) throw new Error(`mesh declare --all failed (${r.code}): ${r.stderr.slice(0, 500)}`);
  const owed = (JSON.parse(r.stdout) as { queued: boolean }[]).filter((d) => d.queued).length;
  if (owed !== expect) throw new Error(`declare owed ${owed} of ${expect}`);
  for (;;) {
    const [row] = await mesh.store.admin`select count(*)::int as n from assignment.outbox where delivered_at is null`;
    if (row!.n === 0) break;
    await sleep(20);
  }
  const deliveredSeconds = (now() - d0) / 1000;
  const drainCpu = drainMeter?.stop();
  // The drain's own window, its first publish confirmed to its last: the command commits in parts, so
  // unheld, serve publishes the first while the rest compose, and the command's end is not where the drain begins.
  const [w] = await mesh.store
    .admin`select extract(epoch from max(delivered_at) - min(delivered_at))::float8 as s from assignment.outbox where created_at >= to_timestamp(${d0 / 1000})`;
  return { seconds, deliveredSeconds, drainSeconds: Math.max(Number(w!.s), 1e-3), drainCpu };
}
