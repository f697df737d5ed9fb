// Simulated hosts for the cluster scenario, run inside a lab machine so each
// dials the brokers over TLS through the lab's NAT and overlay, as a real host
// does. Each has its own token, account and queue; it takes every broker of
// its token and dials them with the host's own link (host/link/link.ts: it
// starts where its name says and, on a lost connection, goes on to the next
// broker after the backoff), so a fleet spreads over the cluster's nodes and
// moves by itself when one dies. On every connection it consumes its queue
// again and, while its enrolment is unanswered, sends the request again (the
// same request, also every 10 s without an answer: a serve killed mid-
// enrolment has it redelivered and answered 'again'); once enrolled it dials
// with the password the mesh issued. It verifies every declaration it is sent
// and reports its serial (again on its next connection when that report was
// not confirmed), and sends its share of the report burst. Every report is
// published mandatory with confirms (R1) under a message id of its own; the
// ids the broker confirmed are handed back, and anything unconfirmed
// (a publish with no connection, or one the dying connection never
// confirmed) is counted, not dropped. Driven over IPC by
// lab/scenarios/cluster.ts: tokens arrive there, never in argv or the environment.
import { randomBytes } from 'node:crypto';
import type { Channel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { hostPort } from '../../src/broker/connect.js';
import { EXCHANGE } from '../../src/broker/topology.js';
import { queueOf } from '../../src/wire/names.js';
import { readToken } from '../../src/wire/token.js';
import { writeEnrolRequest, readEnrolReply } from '../../src/wire/enrol.js';
import { readDeclaration } from '../../src/wire/declaration.js';
import { writeReport } from '../../src/wire/report.js';
import { nodeKeys, key32, type NodeKeys } from '../../src/crypto/keys.js';
import { open } from '../../src/crypto/seal.js';
import { DEFAULT_BACKOFF } from '../../src/sys/backoff.js';
import { Link } from '../../host/link/link.js';

interface Sim {
  name: string;
  /** The link dialling for it now (a retry with a fresh token stops the old one). */
  link?: Link;
  /** The channel of the connection held now; unset while there is none. */
  ch?: ConfirmChannel;
  keys: NodeKeys;
  user: string;
  signing?: Uint8Array;
  mesh?: string;
  serial: number;
  /** The serial of its last report the broker confirmed. */
  said: number;
  reply?: (m: ConsumeMessage) => void;
  /** Declarations that came before the welcome was read (serve answers, then declares): applied once enrolled. */
  early: { msg: ConsumeMessage; ch: Channel }[];
  /** Its declarations, one after another, whichever connection brought them. */
  chain: Promise<void>;
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

/** An ack on the channel the message came on; a channel gone with its connection has it redelivered on the next. */
function ack(ch: Channel, msg: ConsumeMessage): void {
  try { ch.ack(msg); } catch { /* the connection is gone: redelivered */ }
}

function publishConfirmed(s: Sim, key: string, body: Buffer, props: Record<string, unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    if (!s.ch) { resolve(false); return; }
    try {
      s.ch.publish(EXCHANGE, key, body, { mandatory: true, persistent: true, userId: s.user, ...props }, (err) => resolve(!err));
    } catch { resolve(false); }
  });
}

async function report(s: Sim, what: string): Promise<void> {
  const messageId = `${s.name}-${what}-${randomBytes(6).toString('hex')}`;
  const serial = s.serial;
  published++;
  const ok = await publishConfirmed(s, 'report', writeReport({ v: 1, serial, held: [], failed: [], corrected: [], superseded: [] }), { messageId, type: 'report' });
  if (ok) { confirmedIds.push(messageId); s.said = Math.max(s.said, serial); }
  else unconfirmed++;
}

async function onDeclaration(s: Sim, msg: ConsumeMessage, ch: Channel): Promise<void> {
  try {
    const d = readDeclaration(msg.content, s.signing!, { mesh: s.mesh!, node: s.name });
    if (d.serial > s.serial) {
      s.serial = d.serial;
      await report(s, `serial${d.serial}`);
    }
  } catch (err) {
    errors.push(`${s.name}: declaration: ${(err as Error).message}`);
  }
  ack(ch, msg);
}

const sleep = (ms: number) => new Promise<null>((r) => setTimeout(() => r(null), ms));

async function attach(s: Sim, token: string): Promise<void> {
  const t = readToken(token);
  s.user = t.user;
  s.link?.stop();
  s.early = [];
  s.correlation = randomBytes(12).toString('hex');
  const body = writeEnrolRequest(s.name, t.secret, s.keys);
  const request = (ch: ConfirmChannel) => ch.publish(EXCHANGE, 'enrol', body, { persistent: true, mandatory: true, userId: s.user, correlationId: s.correlation, contentType: 'application/json' });
  const reply = new Promise<ConsumeMessage>((resolve) => { s.reply = resolve; });
  // What the link dials with: every broker of the token; the password becomes the mesh's once enrolled.
  const brokers = t.brokers.map((b) => ({ ...hostPort(b.address), fingerprint: b.fingerprint }));
  const id = { name: s.name, broker: { ...brokers[0]!, vhost: t.vhost, user: t.user }, brokers, password: t.secret };
  const link = new Link(id, DEFAULT_BACKOFF, {
    async connected(conn) {
      conn.on('error', () => {});
      const ch = await conn.createConfirmChannel();
      ch.on('error', (e) => errors.push(`${s.name}: channel: ${(e as Error).message}`));
      await ch.consume(queueOf(s.name), (msg) => {
        if (!msg) return;
        if (msg.properties.correlationId && msg.properties.correlationId === s.correlation && s.reply) { ack(ch, msg); s.reply(msg); return; }
        // Contenders share the node's queue: an answer meant for the other goes back for it.
        if (msg.properties.type === 'enrol-reply') { try { ch.nack(msg, false, true); } catch { /* gone */ } return; }
        if (msg.properties.type === 'declaration') {
          if (!s.signing) { s.early.push({ msg, ch }); return; }
          s.chain = s.chain.then(() => onDeclaration(s, msg, ch));
          return;
        }
        ack(ch, msg);
      });
      s.ch = ch;
      // Unanswered: the request again (the one sent before may have gone with the lost connection).
      if (!s.signing) request(ch);
      // Enrolled, and the report of what it holds never confirmed: said again.
      else if (s.said < s.serial) void report(s, `again${s.serial}`);
    },
    lost() { s.ch = undefined; },
    log(line) {
      const m = /connected to ([^\s:]+):(\d+)/.exec(line);
      if (m) send({ type: 'connected', name: s.name, at: `${m[1]}:${m[2]}`, contender: !!s.contender });
      else if (/lost the broker|cannot reach|refusing/.test(line)) send({ type: 'link', name: s.name, line });
    },
  }, () => id.brokers);
  s.link = link;
  void link.run();
  // Enrol: the same request again while no answer comes (at most 6 times 10 s).
  for (let attempt = 1; ; attempt++) {
    const msg = await Promise.race([reply, sleep(10_000)]);
    if (!msg) {
      if (attempt === 6) { link.stop(); send({ type: 'refused', name: s.name, reason: 'no answer to the enrolment request in 60 s' }); return; }
      send({ type: 'resent', name: s.name, attempt });
      if (s.ch) request(s.ch);
      continue;
    }
    const r = readEnrolReply(msg.content);
    if (!r.ok) {
      link.stop();
      if (s.contender) { send({ type: 'contender-refused', name: s.name, reason: r.reason }); return; }
      send({ type: 'refused', name: s.name, reason: r.reason });
      return;
    }
    // From the next connection on, the account's password is the one the mesh issued (the token's secret is spent).
    id.password = Buffer.from(open(r.password, s.keys.sealing.secret)).toString('utf8');
    s.mesh = r.mesh;
    s.signing = key32(r.signingKey, 'signingKey');
    send({ type: 'enrolled', name: s.name, attempts: attempt });
    for (const e of s.early.splice(0)) s.chain = s.chain.then(() => onDeclaration(s, e.msg, e.ch));
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
        // m.hosts: [{name, token, contenders?}], m.reports: reports per host after its enrolment.
        await Promise.all((m.hosts as { name: string; token: string; contenders?: number }[]).flatMap(({ name, token, contenders }) => {
          const racing = (contenders ?? 1) > 1;
          return Array.from({ length: contenders ?? 1 }, async () => {
            const s: Sim = (!racing && sims.get(name)) || { name, keys: nodeKeys(), user: '', serial: 0, said: 0, early: [], chain: Promise.resolve(), contender: racing };
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
        for (const s of sims.values()) s.link?.stop();
        await sleep(500);
        process.exit(0);
      }
    } catch (err) {
      send({ type: 'error', message: (err as Error).stack ?? String(err) });
    }
  })();
});
send({ type: 'ready' });
