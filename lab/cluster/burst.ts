// Simulated hosts for the cluster scenario, run inside a lab machine so each
// dials the broker over TLS through the lab's NAT, as a real host does. Each
// has its own token, account and queue; it enrols (resending the same request
// when no answer comes: a serve killed mid-enrolment has it redelivered and
// answered 'again'), verifies every declaration it is sent and reports its
// serial, and sends its share of the report burst. Every report is published
// mandatory with confirms (R1) under a message id of its own; the ids the
// broker confirmed are handed back, and anything unconfirmed is counted, not
// dropped. Driven over IPC by lab/scenarios/cluster.ts: tokens arrive there,
// never in argv or the environment.
import { randomBytes } from 'node:crypto';
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { connectBroker, hostPort, type Connection } from '../../src/broker/connect.js';
import { EXCHANGE } from '../../src/broker/topology.js';
import { queueOf } from '../../src/wire/names.js';
import { readToken } from '../../src/wire/token.js';
import { writeEnrolRequest, readEnrolReply } from '../../src/wire/enrol.js';
import { readDeclaration } from '../../src/wire/declaration.js';
import { writeReport } from '../../src/wire/report.js';
import { nodeKeys, key32, type NodeKeys } from '../../src/crypto/keys.js';
import { open } from '../../src/crypto/seal.js';

interface Sim {
  name: string;
  conn?: Connection;
  ch?: ConfirmChannel;
  keys: NodeKeys;
  user: string;
  signing?: Uint8Array;
  mesh?: string;
  serial: number;
  reply?: (m: ConsumeMessage) => void;
  /** Declarations that came before the welcome was read (serve answers, then declares): applied once enrolled. */
  early: ConsumeMessage[];
  correlation?: string;
  /** One of several identities racing for one token (E1): the loser is refused, says so and goes. */
  contender?: boolean;
}

const send = (m: unknown) => process.send!(m);
const sims = new Map<string, Sim>();
const confirmedIds: string[] = [];
let unconfirmed = 0;
let published = 0;
const errors: string[] = [];

function publishConfirmed(s: Sim, key: string, body: Buffer, props: Record<string, unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    try {
      s.ch!.publish(EXCHANGE, key, body, { mandatory: true, persistent: true, userId: s.user, ...props }, (err) => resolve(!err));
    } catch { resolve(false); }
  });
}

async function report(s: Sim, what: string): Promise<void> {
  const messageId = `${s.name}-${what}-${randomBytes(6).toString('hex')}`;
  published++;
  const ok = await publishConfirmed(s, 'report', writeReport({ v: 1, serial: s.serial, held: [], failed: [], corrected: [], superseded: [] }), { messageId, type: 'report' });
  if (ok) confirmedIds.push(messageId);
  else unconfirmed++;
}

async function onDeclaration(s: Sim, msg: ConsumeMessage): Promise<void> {
  try {
    const d = readDeclaration(msg.content, s.signing!, { mesh: s.mesh!, node: s.name });
    if (d.serial > s.serial) {
      s.serial = d.serial;
      await report(s, `serial${d.serial}`);
    }
  } catch (err) {
    errors.push(`${s.name}: declaration: ${(err as Error).message}`);
  }
  s.ch!.ack(msg);
}

async function attach(s: Sim, token: string): Promise<void> {
  const t = readToken(token);
  s.user = t.user;
  if (s.conn) await s.conn.close().catch(() => {});
  s.early = [];
  const { host, port } = hostPort(t.broker);
  s.conn = await connectBroker({ host, port, vhost: t.vhost, user: t.user, password: t.secret, fingerprint: t.fingerprint }, { name: `lab sim ${s.name}`, timeoutMs: 30_000 });
  s.conn.on('error', () => {});
  s.ch = await s.conn.createConfirmChannel();
  s.ch.on('error', (e) => errors.push(`${s.name}: channel: ${(e as Error).message}`));
  let chain = Promise.resolve();
  await s.ch.consume(queueOf(s.name), (msg) => {
    if (!msg) return;
    if (msg.properties.correlationId && msg.properties.correlationId === s.correlation && s.reply) { s.ch!.ack(msg); s.reply(msg); return; }
    // Contenders share the node's queue: an answer meant for the other goes back for it.
    if (msg.properties.type === 'enrol-reply') { s.ch!.nack(msg, false, true); return; }
    if (msg.properties.type === 'declaration') {
      if (!s.signing) { s.early.push(msg); return; }
      chain = chain.then(() => onDeclaration(s, msg));
      return;
    }
    s.ch!.ack(msg);
  });
  // Enrol: the same request again while no answer comes (at most 6 times 10 s).
  const body = writeEnrolRequest(s.name, t.secret, s.keys);
  s.correlation = randomBytes(12).toString('hex');
  for (let attempt = 1; ; attempt++) {
    const answer = new Promise<ConsumeMessage | null>((resolve) => { s.reply = resolve; setTimeout(() => resolve(null), 10_000); });
    s.ch.publish(EXCHANGE, 'enrol', body, { persistent: true, mandatory: true, userId: s.user, correlationId: s.correlation, contentType: 'application/json' });
    const msg = await answer;
    if (!msg) {
      if (attempt === 6) { send({ type: 'refused', name: s.name, reason: 'no answer to the enrolment request in 60 s' }); return; }
      send({ type: 'resent', name: s.name, attempt });
      continue;
    }
    const r = readEnrolReply(msg.content);
    if (!r.ok) {
      if (s.contender) { send({ type: 'contender-refused', name: s.name, reason: r.reason }); await s.conn.close().catch(() => {}); return; }
      send({ type: 'refused', name: s.name, reason: r.reason });
      return;
    }
    open(r.password, s.keys.sealing.secret);
    s.mesh = r.mesh;
    s.signing = key32(r.signingKey, 'signingKey');
    send({ type: 'enrolled', name: s.name, attempts: attempt });
    for (const early of s.early.splice(0)) chain = chain.then(() => onDeclaration(s, early));
    return;
  }
}

async function burst(s: Sim, n: number): Promise<void> {
  // At once, whatever it holds by then: serial 0 is "nothing applied yet" (a host's first report may be that).
  await Promise.all(Array.from({ length: n }, (_, i) => report(s, `burst${i}`)));
  send({ type: 'burst-done', name: s.name });
}

process.on('message', (m: any) => {
  void (async () => {
    try {
      if (m.type === 'enrol') {
        // m.hosts: [{name, token}], m.reports: reports per host after its enrolment.
        // m.hosts: [{name, token, contenders?}], m.reports: reports per host after its enrolment.
        await Promise.all((m.hosts as { name: string; token: string; contenders?: number }[]).flatMap(({ name, token, contenders }) => {
          const racing = (contenders ?? 1) > 1;
          return Array.from({ length: contenders ?? 1 }, async () => {
            const s: Sim = (!racing && sims.get(name)) || { name, keys: nodeKeys(), user: '', serial: 0, early: [], contender: racing };
            if (!racing) sims.set(name, s);
            try {
              await attach(s, token);
              if (s.signing && racing) sims.set(name, s);
              if (s.signing && m.reports) void burst(s, m.reports);
            } catch (err) {
              send({ type: 'refused', name, reason: (err as Error).message });
            }
          });
        }));
      } else if (m.type === 'progress') {
        send({ type: 'progress', published, confirmed: confirmedIds.length, unconfirmed, errors: errors.slice(-5) });
      } else if (m.type === 'stop') {
        send({ type: 'stopped', confirmed: confirmedIds, unconfirmed, errors, serials: Object.fromEntries([...sims].map(([k, v]) => [k, v.serial])) });
        await Promise.allSettled([...sims.values()].map((s) => s.conn?.close()));
        process.exit(0);
      }
    } catch (err) {
      send({ type: 'error', message: (err as Error).stack ?? String(err) });
    }
  })();
});
send({ type: 'ready' });
