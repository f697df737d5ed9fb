// Simulated hosts, a few hundred to a process: each with its own broker account
// over pinned TLS and its own queue, doing what mesh-host does at the moments a
// bench measures: enrol (writeEnrolRequest with a chosen password, read the welcome), or
// receive a declaration, verify it, keep it, apply it (files in a temp dir)
// and report. Driven over IPC by the bench (lib.ts worker()); secrets arrive
// over IPC, never in argv or the environment.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { connectBroker, type Connection } from '../../src/broker/connect.js';
import { EXCHANGE } from '../../src/broker/topology.js';
import { queueOf } from '../../src/wire/names.js';
import { writeEnrolRequest, readEnrolReply } from '../../src/wire/enrol.js';
import { readDeclaration } from '../../src/wire/declaration.js';
import { writeReport } from '../../src/wire/report.js';
import { nodeKeys, key32, type NodeKeys } from '../../src/crypto/keys.js';
import { takeDeclaration } from '../../host/keep.js';
import { declarationDigest } from '../../host/serial.js';
import { hostConfig, driverSettings } from '../../host/config.js';

interface HostSpec {
  name: string;
  user: string;
  password: string;
}
interface Setup {
  type: 'connect';
  hosts: HostSpec[];
  broker: { host: string; port: number; vhost: string; fingerprint: string };
  signingKey?: string;
  mesh?: string;
  root?: string;
  stateRoot?: string;
  /** Each host applies under ROOT/NAME, as if it had a filesystem of its own (one path declared to many hosts). */
  ownRoot?: boolean;
}

interface Sim {
  spec: HostSpec;
  conn: Connection;
  ch: ConfirmChannel;
  keys?: NodeKeys;
  pending: Map<string, (m: ConsumeMessage) => void>;
  times: Record<string, number>;
  busy: Promise<void>;
  /** The highest serial applied: an older one arriving later is not applied (D2, as the agent). */
  serial: number;
}

const now = () => performance.timeOrigin + performance.now();
const send = (m: unknown) => process.send!(m);
let sims: Sim[] = [];
let setup: Setup;
let waiting: { key: string; resolve: () => void } | undefined;

function confirmed(
  ch: ConfirmChannel,
  exchange: string,
  key: string,
  body: Buffer,
  props: Record<string, unknown>,
): Promise<void> {
  return new Promise((resolve, reject) =>
    ch.publish(exchange, key, body, props, (err) => (err ? reject(new Error(`not confirmed: ${key}`)) : resolve())),
  );
}

function mark(s: Sim, key: string): void {
  s.times[key] = now();
  if (waiting && waiting.key === key && sims.every((x) => x.times[key] !== undefined)) waiting.resolve();
}

async function onDeclaration(s: Sim, msg: ConsumeMessage): Promise<void> {
  s.times.received = now();
  const decl = readDeclaration(msg.content, key32(setup.signingKey!, 'signingKey'), {
    mesh: setup.mesh!,
    node: s.spec.name,
  });
  // As the agent's drain: the digest its mark records, beside the verified declaration.
  const digest = declarationDigest(msg.content);
  s.times.verified = now();
  if (decl.serial <= s.serial) {
    s.ch.ack(msg);
    return;
  } // the drain's confirm channels may deliver a node's serials out of order
  s.serial = decl.serial;
  const dir = join(setup.stateRoot!, s.spec.name);
  mkdirSync(dir, { recursive: true, mode: 0o700 }); // the agent's MESH_HOST_DIR exists before it runs
  const resources = setup.ownRoot
    ? decl.resources.map((x) =>
        'path' in x && typeof x.path === 'string' ? { ...x, path: join(setup.root!, s.spec.name, x.path) } : x,
      )
    : decl.resources;
  // The agent's own path (D7): kept and marked in one durable batch, then applied.
  const r = await takeDeclaration(dir, msg.content, { ...decl, resources }, digest, {
    stateDir: dir,
    roots: [setup.root!],
    openSealed: () => {
      throw new Error('no secrets here');
    },
    overlayKeyPath: join(dir, 'overlay.key'),
    ...driverSettings(hostConfig()),
    log: () => {},
  });
  if (r.failed.length) throw new Error(`${s.spec.name} could not apply: ${JSON.stringify(r.failed)}`);
  s.times.applied = now();
  const report = writeReport({
    v: 1,
    serial: decl.serial,
    held: r.held as never,
    failed: r.failed,
    corrected: [],
    superseded: [],
  });
  await confirmed(s.ch, EXCHANGE, 'report', report, {
    mandatory: true,
    persistent: true,
    userId: s.spec.user,
    messageId: randomBytes(8).toString('hex'),
    type: 'report',
  });
  s.ch.ack(msg);
  mark(s, 'reported');
}

async function onPing(s: Sim, msg: ConsumeMessage): Promise<void> {
  s.times.pinged = now();
  await confirmed(s.ch, EXCHANGE, 'bench.pong', Buffer.from(s.spec.name), {
    mandatory: true,
    persistent: true,
    userId: s.spec.user,
  });
  s.ch.ack(msg);
  mark(s, 'ponged');
}

async function connectOne(spec: HostSpec): Promise<Sim> {
  const { host, port, vhost, fingerprint } = setup.broker;
  const conn = await connectBroker(
    { host, port, vhost, user: spec.user, password: spec.password, fingerprint },
    { name: `bench ${spec.name}`, timeoutMs: 60_000 },
  );
  conn.on('error', () => {});
  const ch = await conn.createConfirmChannel();
  ch.on('error', (e) => send({ type: 'error', message: `${spec.name}: channel: ${(e as Error).message}` }));
  await ch.prefetch(256);
  const s: Sim = { spec, conn, ch, pending: new Map(), times: {}, busy: Promise.resolve(), serial: 0 };
  await ch.consume(queueOf(spec.name), (msg) => {
    if (!msg) return;
    const cid = msg.properties.correlationId as string | undefined;
    const waiter = cid ? s.pending.get(cid) : undefined;
    if (waiter) {
      s.pending.delete(cid!);
      ch.ack(msg);
      waiter(msg);
      return;
    }
    const t = msg.properties.type;
    // Without the mesh's key (bench 1 measures enrolment alone), the first declaration serve sends
    // each node after its welcome (W2) is taken off the queue and left.
    const job = t === 'declaration' && setup.signingKey ? onDeclaration : t === 'bench.ping' ? onPing : undefined;
    if (!job) {
      ch.ack(msg);
      return;
    }
    // One at a time per host, as the agent does.
    s.busy = s.busy
      .then(() => job(s, msg))
      .catch((e) => {
        send({ type: 'error', message: `${spec.name}: ${(e as Error).message}` });
      });
  });
  return s;
}

/** A request on the exchange, answered on the host's own queue by correlation id. */
function ask(s: Sim, key: string, body: Buffer, props: Record<string, unknown> = {}): Promise<ConsumeMessage> {
  const correlationId = randomBytes(12).toString('hex');
  const reply = new Promise<ConsumeMessage>((resolve) => s.pending.set(correlationId, resolve));
  s.ch.publish(EXCHANGE, key, body, {
    persistent: true,
    mandatory: true,
    userId: s.spec.user,
    correlationId,
    contentType: 'application/json',
    ...props,
  });
  return reply;
}

async function round(kind: 'echo' | 'enrol'): Promise<void> {
  const t0s: number[] = [];
  const lat: number[] = [];
  let ok = 0;
  let t1 = 0;
  await Promise.all(
    sims.map(async (s) => {
      const body = writeEnrolRequest(s.spec.name, s.spec.password, randomBytes(32).toString('base64url'), s.keys!);
      const t0 = now();
      t0s.push(t0);
      const msg = await ask(s, kind === 'echo' ? 'bench.echo' : 'enrol', body);
      if (kind === 'enrol') {
        const answer = readEnrolReply(msg.content);
        if (answer.ok) ok++;
      } else ok++;
      const t = now();
      lat.push(t - t0);
      t1 = Math.max(t1, t);
    }),
  );
  send({ type: `${kind}-done`, t0: Math.min(...t0s), t1, ok, lat });
}

process.on('message', (m: any) => {
  void (async () => {
    try {
      if (m.type === 'connect') {
        setup = m as Setup;
        const t0 = now();
        const todo = [...setup.hosts];
        await Promise.all(
          Array.from({ length: 16 }, async () => {
            for (let h = todo.shift(); h; h = todo.shift()) {
              const s = await connectOne(h);
              s.keys = nodeKeys();
              sims.push(s);
            }
          }),
        );
        send({ type: 'ready', seconds: (now() - t0) / 1000 });
      } else if (m.type === 'echo' || m.type === 'enrol') {
        await round(m.type);
      } else if (m.type === 'collect') {
        // Wait until every host here has passed the mark, then hand over the times.
        const key = m.key as string;
        if (!sims.every((s) => s.times[key] !== undefined))
          await new Promise<void>((resolve) => {
            waiting = { key, resolve };
          });
        waiting = undefined;
        send({ type: 'collected', times: sims.map((s) => ({ name: s.spec.name, ...s.times })) });
        for (const s of sims) s.times = {};
      } else if (m.type === 'stop') {
        await Promise.allSettled(sims.map((s) => s.conn.close()));
        process.exit(0);
      }
    } catch (err) {
      send({ type: 'error', message: (err as Error).stack ?? String(err) });
    }
  })();
});
