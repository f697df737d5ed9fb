// `mesh-host enrol <token>`: make the three keys, dial the broker over TLS
// pinned to the token's fingerprint, present the token's secret and the public
// keys, and keep the identity only once the mesh says it knows this node (E4).
import { randomBytes } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import { readToken, type Token } from '../src/wire/token.js';
import { writeEnrolRequest, readEnrolReply } from '../src/wire/enrol.js';
import { queueOf } from '../src/wire/names.js';
import { nodeKeys, b64 } from '../src/crypto/keys.js';
import { open } from '../src/crypto/seal.js';
import { connectBroker, hostPort, type Connection } from '../src/broker/connect.js';
import { Turns, NoneAnswered } from '../src/broker/turns.js';
import { EXCHANGE } from '../src/broker/topology.js';
import { publish, Unroutable } from '../src/broker/publish.js';
import { loadIdentity, saveIdentity, identityPath, type Identity } from './identity.js';

export class EnrolError extends Error {}

export interface Enrolled { name: string; mesh: string; keys: { identity: string; overlay: string; sealing: string } }

export async function enrol(tokenText: string, dir: string, opts: { timeoutMs?: number } = {}): Promise<Enrolled> {
  const existing = loadIdentity(dir);
  if (existing) {
    throw new EnrolError(`this machine is already enrolled as ${existing.name} in mesh ${existing.mesh} and keeps one identity. ` +
      `To enrol it again: mesh node retire ${existing.name} on the control plane, then remove ${identityPath(dir)}.`);
  }
  const token = readToken(tokenText.trim());
  const keys = nodeKeys();
  const { conn, host, port, fingerprint } = await dial(token);
  try {
    const ch = await conn.createConfirmChannel();
    const correlationId = randomBytes(12).toString('hex');
    const reply = new Promise<ConsumeMessage>((resolve) => {
      void ch.consume(queueOf(token.node), (msg) => {
        if (!msg) return;
        ch.ack(msg);
        // Anything else waiting on the queue (an earlier attempt's answer) is not ours.
        if (msg.properties.correlationId === correlationId) resolve(msg);
      });
    });
    await publish(ch, EXCHANGE, 'enrol', writeEnrolRequest(token.node, token.secret, keys),
      { mandatory: true, userId: token.user, correlationId, contentType: 'application/json' })
      .catch((err) => {
        throw new EnrolError(err instanceof Unroutable ? 'the broker has no control queue to take the enrolment request: is `mesh serve` running (it declares the queue)?'
          : 'the broker did not accept the enrolment request', { cause: err });
      });
    const timeout = opts.timeoutMs ?? 60_000;
    const msg = await Promise.race([
      reply,
      new Promise<never>((_, reject) => setTimeout(() => reject(new EnrolError(`no answer from the control plane within ${timeout / 1000}s: is \`mesh serve\` running?`)), timeout).unref()),
    ]);
    const answer = readEnrolReply(msg.content);
    if (!answer.ok) throw new EnrolError(`the mesh refused to enrol ${token.node}: ${answer.reason}`);
    const password = Buffer.from(open(answer.password, keys.sealing.secret)).toString('utf8');
    const id: Identity = {
      v: 1,
      name: token.node,
      mesh: answer.mesh,
      signingKey: answer.signingKey,
      broker: { host, port, vhost: token.vhost, user: token.user, fingerprint },
      brokers: token.brokers.map((b) => ({ ...hostPort(b.address), fingerprint: b.fingerprint })),
      password,
      keys: { identity: b64(keys.identity.secret), overlay: b64(keys.overlay.secret), sealing: b64(keys.sealing.secret) },
    };
    await saveIdentity(dir, id);
    return { name: id.name, mesh: id.mesh, keys: { identity: b64(keys.identity.public), overlay: b64(keys.overlay.public), sealing: b64(keys.sealing.public) } };
  } finally {
    await conn.close().catch(() => {});
  }
}

/** The broker refused the account itself: the same on every broker of one cluster (one set of accounts). */
function accountRefused(err: Error): boolean {
  // amqplib says "Handshake terminated by server: 403 (ACCESS-REFUSED) ..."; a bare 403 could be a port.
  return /ACCESS[-_]REFUSED/.test(err.message);
}

/**
 * The token's brokers in turn (src/broker/turns.ts): the first that answers is
 * where the request goes. A refused account is the token's fault on every
 * broker, said at once; a broker down or presenting another certificate is
 * passed over, and said with the rest if none answers.
 */
async function dial(token: Token): Promise<{ conn: Connection; host: string; port: number; fingerprint: string }> {
  const turns = new Turns(token.brokers.map((b) => ({ ...hostPort(b.address), vhost: token.vhost, user: token.user, password: token.secret, fingerprint: b.fingerprint })));
  try {
    // A single broker fails as it always did, with its own error (L2's full sentence for a wrong certificate).
    const { conn, endpoint } = await turns.connect(`mesh-host enrol ${token.node}`, (err) => accountRefused(err) || token.brokers.length === 1);
    return { conn, host: endpoint.host, port: endpoint.port, fingerprint: endpoint.fingerprint! };
  } catch (err) {
    if (accountRefused(err as Error)) {
      throw new EnrolError(`the broker refused this token's account (${token.node}): the token was spent, replaced or the node retired. Ask the operator for a new one (mesh token issue ${token.node}).`, { cause: err });
    }
    if (err instanceof NoneAnswered) throw new EnrolError(`no broker of this token answered: ${err.message}`, { cause: err });
    throw err;
  }
}
