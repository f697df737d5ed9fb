// Simulated hosts for the cluster scenario, run inside a lab machine so each
// dials the brokers over TLS through the lab's NAT and overlay, as a real host
// does. Each has its own token, account, queue and MESH_HOST_DIR. It enrols
// with mesh-host's own enrolment (host/enrol.ts): keys and a chosen broker
// password kept in a pending file first, the token's brokers in turn from the
// place its name says (so a fleet spreads over the cluster's nodes), the same
// request again through the next broker when a connection is lost before the
// welcome is read (a broker node killed mid-enrolment), and the chosen
// password once the token's secret is refused (a serve spent the token for
// these keys meanwhile). Each step it takes is handed to the scenario. Once
// enrolled it holds the host's own link (host/link/link.ts) with the identity
// it kept: on a lost connection it goes on to the next broker after the
// backoff. It verifies every declaration it is sent and reports its serial
// (again on its next connection when that report was not confirmed), and
// sends its share of the report burst. Every report is published mandatory
// with confirms (R1) under a message id of its own; the ids the broker
// confirmed are handed back, and anything unconfirmed (a publish with no
// connection, or one the dying connection never confirmed) is counted, not
// dropped. Driven over IPC by lab/scenarios/cluster.ts: tokens arrive there,
// never in argv or the environment.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { Channel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { EXCHANGE } from '../../src/broker/topology.js';
import { queueOf } from '../../src/wire/names.js';
import { readDeclaration } from '../../src/wire/declaration.js';
import { writeReport } from '../../src/wire/report.js';
import { key32 } from '../../src/crypto/keys.js';
import { DEFAULT_BACKOFF } from '../../src/sys/backoff.js';
import { Link, startOf } from '../../host/link/link.js';
import { enrol } from '../../host/enrol.js';
import { loadIdentity } from '../../host/identity.js';

interface Sim {
  name: string;
  /** The link dialling for it now (a retry with a fresh token stops the old one). */
  link?: Link;
  /** The channel of the connection held now; unset while there is none. */
  ch?: ConfirmChannel;
  /** Its MESH_HOST_DIR: the pending enrolment, then the identity. */
  dir: string;
  user: string;
  signing?: Uint8Array;
  mesh?: string;
  serial: number;
  /** The serial of its last report the broker confirmed. */
  said: number;
  /** Its declarations, one after another, whichever connection brought them. */
  chain: Promise<void>;
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
  try {
    ch.ack(msg);
  } catch {
    /* the connection is gone: redelivered */
  }
}

function publishConfirmed(s: Sim, key: string, body: Buffer, props: Record<string, unknown>): Promise<boolean> {
  return new Promise((resolve) => {
    if (!s.ch) {
      resolve(false);
      return;
    }
    try {
      s.ch.publish(EXCHANGE, key, body, { mandatory: true, persistent: true, userId: s.user, ...props }, (err) =>
        resolve(!err),
      );
    } catch {
      resolve(false);
    }
  });
}

async function report(s: Sim, what: string): Promise<void> {
  const messageId = `${s.name}-${what}-${randomBytes(6).toString('hex')}`;
  const serial = s.serial;
  published++;
  const ok = await publishConfirmed(
    s,
    'report',
    writeReport({ v: 1, serial, held: [], failed: [], corrected: [], superseded: [] }),
    { messageId, type: 'report' },
  );
  if (ok) {
    confirmedIds.push(messageId);
    s.said = Math.max(s.said, serial);
  } else unconfirmed++;
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

/** Each simulated host's own MESH_HOST_DIR (its pending file, then its identity), under one folder removed at stop. */
const base = mkdtempSync(join(tmpdir(), 'mesh-lab-sims-'));
let dirs = 0;
/** Enrolments under way by name: two contenders share one name's queue. */
const enrolling = new Map<string, number>();

/**
 * Enrol with mesh-host's own enrolment (host/enrol.ts: the pending file, the
 * token's brokers in turn from where the name says, the request again on the
 * next broker after a lost connection, the chosen password once the token's
 * secret is refused), then hold the host's link with the identity it kept.
 */
async function attach(s: Sim, token: string): Promise<void> {
  s.link?.stop();
  enrolling.set(s.name, (enrolling.get(s.name) ?? 0) + 1);
  try {
    await enrol(token, s.dir, {
      timeoutMs: 180_000,
      start: (n) => startOf(s.name, n),
      step: (st) =>
        send({ type: 'enrol-step', name: s.name, kind: st.kind, at: st.at, line: st.line, contender: !!s.contender }),
    });
  } catch (err) {
    const m = /the mesh refused to enrol \S+: (.*): the operator's log/.exec((err as Error).message);
    const reason = m ? m[1]! : (err as Error).message;
    send({ type: s.contender ? 'contender-refused' : 'refused', name: s.name, reason });
    return;
  } finally {
    enrolling.set(s.name, enrolling.get(s.name)! - 1);
  }
  const id = loadIdentity(s.dir)!;
  s.user = id.broker.user;
  s.mesh = id.mesh;
  s.signing = key32(id.signingKey, 'signingKey');
  send({ type: 'enrolled', name: s.name });
  let up: () => void = () => {};
  const first = new Promise<void>((r) => {
    up = r;
  });
  const link = new Link(id, DEFAULT_BACKOFF, {
    async connected(conn) {
      conn.on('error', () => {});
      const ch = await conn.createConfirmChannel();
      ch.on('error', (e) => errors.push(`${s.name}: channel: ${(e as Error).message}`));
      await ch.consume(queueOf(s.name), (msg) => {
        if (!msg) return;
        if (msg.properties.type === 'declaration') {
          s.chain = s.chain.then(() => onDeclaration(s, msg, ch));
          return;
        }
        // A contender still enrolling shares the queue: its answer goes back for it (while it waits it holds what
        // else it was given, declarations too, until it reads that answer and closes).
        if (msg.properties.type === 'enrol-reply' && (enrolling.get(s.name) ?? 0) > 0) {
          try {
            ch.nack(msg, false, true);
          } catch {
            /* gone */
          }
          return;
        }
        // An answer to a request sent again ('again'), read after the first: nothing more to learn.
        ack(ch, msg);
      });
      s.ch = ch;
      up();
      // The report of what it holds never confirmed: said again.
      if (s.said < s.serial) void report(s, `again${s.serial}`);
    },
    lost() {
      s.ch = undefined;
    },
    log(line) {
      const m = /connected to ([^\s:]+):(\d+)/.exec(line);
      if (m) send({ type: 'connected', name: s.name, at: `${m[1]}:${m[2]}`, contender: !!s.contender });
      else if (/lost the broker|cannot reach|refusing/.test(line)) send({ type: 'link', name: s.name, line });
    },
  });
  s.link = link;
  void link.run();
  // Its burst begins on a connection.
  await first;
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
        await Promise.all(
          (m.hosts as { name: string; token: string; contenders?: number }[]).flatMap(({ name, token, contenders }) => {
            const racing = (contenders ?? 1) > 1;
            return Array.from({ length: contenders ?? 1 }, async () => {
              const s: Sim = (!racing && sims.get(name)) || {
                name,
                dir: join(base, `${name}-${dirs++}`),
                user: '',
                serial: 0,
                said: 0,
                chain: Promise.resolve(),
                contender: racing,
              };
              if (!racing) sims.set(name, s);
              try {
                await attach(s, token);
                if (s.signing && racing) sims.set(name, s);
                if (s.signing && m.reports) void burst(s, m.reports);
              } catch (err) {
                send({ type: 'refused', name, reason: (err as Error).message });
              }
            });
          }),
        );
      } else if (m.type === 'progress') {
        send({ type: 'progress', published, confirmed: confirmedIds.length, unconfirmed, errors: errors.slice(-5) });
      } else if (m.type === 'stop') {
        send({
          type: 'stopped',
          confirmed: confirmedIds,
          unconfirmed,
          errors,
          serials: Object.fromEntries([...sims].map(([k, v]) => [k, v.serial])),
        });
        for (const s of sims.values()) s.link?.stop();
        await sleep(500);
        rmSync(base, { recursive: true, force: true });
        process.exit(0);
      }
    } catch (err) {
      send({ type: 'error', message: (err as Error).stack ?? String(err) });
    }
  })();
});
send({ type: 'ready' });
