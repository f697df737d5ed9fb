// `mesh-host enrol` (the token on stdin, E7): make the three keys and choose a broker password,
// keep them in a pending file (host/enrol_pending.ts), dial the broker over TLS pinned to the token's
// fingerprint, present the token's secret, the password and the public keys,
// and keep the identity only once the mesh says it knows this node (E4) in a
// welcome naming the signing key the token pins (E6).
//
// Why the pending file: serve sets the account's password to the chosen one
// before its welcome reaches the host. A host whose broker node dies in that
// gap (or whose process dies) must still get in: the token's secret no longer
// logs in, so it dials with the password it kept, sends the same request again
// (serve answers 'again') and reads the welcome. Without the file its keys and
// password were gone, and a spent token with them.
import { unlink } from 'node:fs/promises';
import type { Channel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import { readToken, pinOf, type Token } from '../src/wire/token.js';
import { writeEnrolRequest, readEnrolReply, type EnrolWelcome } from '../src/wire/enrol.js';
import { queueOf } from '../src/wire/names.js';
import { b64, type NodeKeys } from '../src/crypto/keys.js';
import type { Connection, Endpoint } from '../src/broker/connect.js';
import { splitHostPort } from '../src/wire/names.js';
import { Turns, NoneAnswered } from '../src/broker/turns.js';
import { EXCHANGE } from '../src/broker/topology.js';
import { publish, Unroutable } from '../src/broker/publish.js';
import { refuse } from '../src/sys/errors.js';
import { loadIdentity, saveIdentity, identityPath, type Identity } from './identity.js';
import { begin, keysOf, pendingPath, type Pending } from './enrol_pending.js';

import { spreadOf } from './link/link.js';

export interface Enrolled {
  name: string;
  mesh: string;
  keys: { identity: string; overlay: string; sealing: string };
}

/** What an enrolment is at, said as it goes: mesh-host enrol prints the line; the lab counts the kinds. */
export interface EnrolStep {
  kind: 'resumed' | 'replaced' | 'sent' | 'lost' | 'chosen-password' | 'dropped';
  /** The broker (HOST:PORT) of a sent request or a lost connection. */
  at?: string;
  line: string;
}

export interface EnrolOptions {
  /** The whole enrolment, every broker and every resend, within this (default 60 s). */
  timeoutMs?: number;
  step?: (s: EnrolStep) => void;
  /** Where the first dial goes in the token's list of N brokers; by default the token's first. */
  start?: (n: number) => number;
}

export async function enrol(tokenText: string, dir: string, opts: EnrolOptions = {}): Promise<Enrolled> {
  const existing = loadIdentity(dir);
  if (existing) {
    throw refuse(
      'MSHG8',
      `this machine is already enrolled as ${existing.name} in mesh ${existing.mesh} and keeps one identity`,
      `to enrol it again: mesh node retire ${existing.name} on the control plane, then remove ${identityPath(dir)}`,
    );
  }
  const token = readToken(tokenText.trim());
  const step = opts.step ?? (() => {});
  const { pending, stale } = await begin(token, dir, step);
  const keys = keysOf(pending);
  const { welcome, endpoint } = await converse(token, pending, keys, stale, opts, step);
  const id: Identity = {
    v: 1,
    name: token.node,
    mesh: welcome.mesh,
    signingKey: welcome.signingKey,
    broker: {
      host: endpoint.host,
      port: endpoint.port,
      vhost: token.vhost,
      user: token.user,
      fingerprint: endpoint.fingerprint!,
    },
    brokers: token.brokers.map((b) => ({ ...splitHostPort(b.address), fingerprint: b.fingerprint })),
    password: pending.password,
    keys: pending.keys,
  };
  await saveIdentity(dir, id);
  // The identity holds all the pending file did: it goes (E4 keeps one identity, not two copies of its keys).
  await unlink(pendingPath(dir)).catch(() => {});
  return {
    name: id.name,
    mesh: id.mesh,
    keys: { identity: b64(keys.identity.public), overlay: b64(keys.overlay.public), sealing: b64(keys.sealing.public) },
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/**
 * Send the request and read the welcome, over as many connections as it
 * takes: a connection lost while waiting (its broker node died) is followed by
 * the next broker and the same request again, until the deadline. Refusals
 * end it at once.
 */
async function converse(
  token: Token,
  pending: Pending,
  keys: NodeKeys,
  stale: string | undefined,
  opts: EnrolOptions,
  step: (s: EnrolStep) => void,
): Promise<{ welcome: EnrolWelcome; endpoint: Endpoint }> {
  const timeout = opts.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeout;
  const body = writeEnrolRequest(token.node, token.secret, pending.password, keys);
  const dialler = new Dialler(token, pending.password, opts.start, step);
  let redial = false;
  /** Since the last lost connection, why no broker could be dialled: said if the time runs out on it. */
  let undialled: unknown;
  for (;;) {
    if (Date.now() >= deadline) throw undialled ?? noAnswer(timeout);
    let dialled;
    try {
      dialled = await dialler.dial();
    } catch (err) {
      // The first dial fails as it always did; after a lost connection the node may be coming back: again until the deadline.
      if (!redial || (err as { code?: string }).code === 'MSHG9') throw err;
      undialled = err;
      await sleep(Math.min(1000, Math.max(0, deadline - Date.now())));
      continue;
    }
    undialled = undefined;
    const { conn, endpoint } = dialled;
    const at = `${endpoint.host}:${endpoint.port}`;
    try {
      const got = await exchangeAt(conn, at, token, pending, body, stale, Math.max(0, deadline - Date.now()), step);
      if (got === 'timeout') throw noAnswer(timeout);
      if (typeof got === 'string') {
        step({
          kind: 'lost',
          at,
          line: `lost the broker at ${at} before the answer came (${got}): the request goes again through the next broker`,
        });
        dialler.moveOn();
        redial = true;
        continue;
      }
      const answer = readEnrolReply(got.content);
      if (!answer.ok)
        throw refuse(
          'MSHI4',
          `the mesh refused to enrol ${token.node}: ${answer.reason}`,
          "the operator's log (mesh serve) says why",
        );
      // E6: the token names the mesh's key. Anyone who can publish to this queue (a broker's admin, any broker
      // node) can answer first; a welcome naming another key is refused, and nothing of it is kept.
      if (pinOf(Buffer.from(answer.signingKey, 'base64')) !== token.pin)
        throw refuse(
          'MSHU0',
          `a welcome for ${token.node} named a signing key (${answer.signingKey}) other than the one its token names: it was not sent by the mesh that issued the token, and nothing of it was kept`,
          `the broker or someone who can publish to its queues is not to be trusted: tell the operator; once the mesh's own answer can arrive, run the same command again (it resumes with the same keys)`,
        );
      return { welcome: answer, endpoint };
    } finally {
      await conn.close().catch(() => {});
    }
  }
}

/** The exchange on CONN, the broker at AT, with its request sent and any reply dropped told as steps. */
function exchangeAt(
  conn: Connection,
  at: string,
  token: Token,
  pending: Pending,
  body: Buffer,
  stale: string | undefined,
  waitMs: number,
  step: (s: EnrolStep) => void,
): Promise<ConsumeMessage | string> {
  return exchange(
    conn,
    token,
    pending,
    body,
    stale,
    waitMs,
    () =>
      step({
        kind: 'sent',
        at,
        line: `sent the enrolment request of ${token.node} through ${at}; waiting for the mesh's answer`,
      }),
    (id) =>
      step({
        kind: 'dropped',
        at,
        line: `dropped a reply to another enrolment of ${token.node} (correlation id ${id}): this machine is its queue's only reader`,
      }),
  );
}

function noAnswer(timeout: number) {
  return refuse('MSHI3', `no answer from the control plane within ${timeout / 1000}s (MESH_HOST_ENROL_SECONDS)`);
}

/**
 * On one connection: consume the node's queue, publish the request, and wait.
 * Resolves with the answer to this enrolment, the reason the connection was
 * lost, or 'timeout'. Messages that are not the answer are left unacked: the
 * broker gives them back when this connection closes, so a declaration sent
 * right after the welcome waits for mesh-host run.
 */
async function exchange(
  conn: Connection,
  token: Token,
  pending: Pending,
  body: Buffer,
  stale: string | undefined,
  waitMs: number,
  sent: () => void,
  dropped: (correlationId: string | undefined) => void,
): Promise<ConsumeMessage | string> {
  const loss = watchLoss(conn);
  const ch = await conn.createConfirmChannel();
  // The channel closed under us (its queue refused, say): as good as a lost connection, never a wait without end.
  ch.on('close', () => loss.gone('the channel closed'));
  ch.on('error', () => {});
  const { reply, judged } = replyOn(conn, ch, token, pending, stale, dropped);
  const unsent = await sendRequest(ch, token, pending, body, loss);
  if (unsent !== undefined) return unsent;
  sent();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), waitMs);
  });
  try {
    const got = await Promise.race([reply, loss.lost, timedOut]);
    // Another enrolment's reply that came first is judged (dropped or given back) before the channel goes.
    if (typeof got !== 'string') await judged();
    // The answer was acked: the channel's close waits until the broker has taken the ack, which a connection's
    // close alone does not. An answer refused here (E6) must not come back to the next run.
    if (typeof got !== 'string') await ch.close().catch(() => {});
    return got;
  } finally {
    clearTimeout(timer);
  }
}

/** A connection's loss: LOST resolves with why it went (the first reason given), WHY says it if it has. */
interface Loss {
  lost: Promise<string>;
  why(): string | undefined;
  gone(why: string): void;
}

function watchLoss(conn: Connection): Loss {
  let lostWhy: string | undefined;
  let gone: (why: string) => void = () => {};
  const lost = new Promise<string>((resolve) => {
    gone = (why) => {
      lostWhy ??= why;
      resolve(lostWhy);
    };
  });
  conn.on('close', (err?: Error) => gone(err ? err.message : 'closed'));
  conn.on('error', () => {});
  return { lost, why: () => lostWhy, gone: (why) => gone(why) };
}

/** The answer to this enrolment on the node's queue, read on CH; every other message acked, dropped or given back. */
function replyOn(
  conn: Connection,
  ch: ConfirmChannel,
  token: Token,
  pending: Pending,
  stale: string | undefined,
  dropped: (correlationId: string | undefined) => void,
): { reply: Promise<ConsumeMessage>; judged: () => Promise<unknown> } {
  /**
   * A reply to another enrolment. Another machine trying the same token reads its own: it goes back to the
   * queue. With no other reader it is nobody's (a pending file removed, a run before it), and requeued it
   * would come straight back here until the welcome or the deadline: it is dropped. A machine whose reply
   * is dropped was between connections, and sends its request again on the next (answered 'again').
   */
  let probe: Promise<Channel> | undefined;
  const otherReply = async (msg: ConsumeMessage, id: string | undefined) => {
    try {
      // On a channel of its own: a refused check closes that channel, not the one the answer comes on.
      probe ??= conn.createChannel().then((c) => {
        c.on('error', () => {});
        return c;
      });
      const { consumerCount } = await (await probe).checkQueue(queueOf(token.node));
      if (consumerCount > 1) {
        ch.nack(msg, false, true);
        return;
      }
      ch.ack(msg);
      dropped(id);
    } catch {
      /* the connection went: the broker gives the message back */
    }
  };
  const judging = new Set<Promise<void>>();
  const reply = new Promise<ConsumeMessage>((resolve) => {
    void ch
      .consume(queueOf(token.node), (msg) => {
        if (!msg) return;
        const id = msg.properties.correlationId;
        // The answer to this enrolment, on this connection or (resumed) an earlier one: the same correlation id.
        if (id === pending.correlationId) {
          ch.ack(msg);
          resolve(msg);
          return;
        }
        // The answer to an enrolment this one replaced: nobody will read it.
        if (stale !== undefined && id === stale) {
          ch.ack(msg);
          return;
        }
        if (msg.properties.type === 'enrol-reply') {
          const judge = otherReply(msg, id);
          judging.add(judge);
          void judge.finally(() => judging.delete(judge));
        }
      })
      .catch(() => {});
  });
  return { reply, judged: () => Promise.all(judging) };
}

/** The request published, confirmed: undefined once sent, or why the connection was lost before it was. */
async function sendRequest(
  ch: ConfirmChannel,
  token: Token,
  pending: Pending,
  body: Buffer,
  loss: Loss,
): Promise<string | undefined> {
  try {
    await publish(ch, EXCHANGE, 'enrol', body, {
      mandatory: true,
      userId: token.user,
      correlationId: pending.correlationId,
      contentType: 'application/json',
    });
    return undefined;
  } catch (err) {
    if (err instanceof Unroutable) {
      throw refuse(
        'MSHI1',
        'the broker has no control queue to take the enrolment request',
        'is mesh serve running (it declares mesh.control)? Start it, then give mesh-host enrol the token again',
        err,
      );
    }
    // Nacked while the connection stands: the broker would not take it. Unconfirmed with the connection gone: lost, sent again.
    const nacked = /nack/i.test(String(((err as Error).cause as Error | undefined)?.message));
    if (nacked && loss.why() === undefined)
      throw refuse('MSHI2', 'the broker did not accept the enrolment request', undefined, err);
    return loss.why() ?? (await loss.lost);
  }
}

/** The broker refused the account itself: the same on every broker of one cluster (one set of accounts). */
function accountRefused(err: Error): boolean {
  // amqplib says "Handshake terminated by server: 403 (ACCESS-REFUSED) ..."; a bare 403 could be a port.
  return /ACCESS[-_]REFUSED/.test(err.message);
}

/**
 * The token's brokers in turn (src/broker/turns.ts): the first that answers is
 * where the request goes. First with the token's secret; where the account is
 * refused, with the password this machine chose (a serve spent the token for
 * these keys and set it: the request goes again and is answered 'again'). A
 * refused account is the same on every broker, said at once; a broker down or
 * presenting another certificate is passed over, and said with the rest if
 * none answers.
 */
class Dialler {
  private password: string;
  private readonly turns: Turns<Endpoint>;
  constructor(
    private readonly token: Token,
    private readonly chosen: string,
    start: ((n: number) => number) | undefined,
    private readonly step: (s: EnrolStep) => void,
  ) {
    this.password = token.secret;
    const places = token.brokers.map((b) => ({
      ...splitHostPort(b.address),
      vhost: token.vhost,
      user: token.user,
      fingerprint: b.fingerprint,
    }));
    this.turns = new Turns(
      () => places.map((p) => ({ ...p, password: this.password })),
      start,
      (m) => spreadOf(token.node, m),
    );
  }

  moveOn(): void {
    this.turns.moveOn();
  }

  async dial(): Promise<{ conn: Connection; endpoint: Endpoint }> {
    const token = this.token;
    // The token's secret first: until a serve spends the token, it is the account's password.
    this.password = token.secret;
    try {
      return await this.round();
    } catch (err) {
      if (!accountRefused(err as Error)) throw err;
    }
    this.password = this.chosen;
    this.step({
      kind: 'chosen-password',
      line: `the token's secret no longer logs in as ${token.node}: dialling with the broker password this machine chose (the token may be spent for these keys)`,
    });
    try {
      return await this.round();
    } catch (err) {
      if (accountRefused(err as Error)) {
        throw refuse(
          'MSHG9',
          `the broker refused this token's account (${token.node}) with the token's secret and with the password this machine chose`,
          `the token was spent by another machine, replaced or the node retired: ask the operator for a new one (mesh token issue ${token.node})`,
          err,
        );
      }
      throw err;
    }
  }

  private async round(): Promise<{ conn: Connection; endpoint: Endpoint }> {
    const token = this.token;
    try {
      // A single broker fails as it always did, with its own error (L2's full sentence for a wrong certificate).
      return await this.turns.connect(
        `mesh-host enrol ${token.node}`,
        (err) => accountRefused(err) || token.brokers.length === 1,
      );
    } catch (err) {
      if (err instanceof NoneAnswered)
        throw refuse('MSHI0', `no broker of this token answered: ${err.message}`, undefined, err);
      throw err;
    }
  }
}
