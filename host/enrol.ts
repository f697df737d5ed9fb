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
  const { conn, host, port, fingerprint } = await dialFirst(token);
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

/**
 * The token's brokers in turn: the first that answers is where the request
 * goes. A refused account is the token's fault on every broker (one cluster,
 * one set of accounts), said at once; a broker down or presenting another
 * certificate is passed over, and said with the rest if none answers.
 */
async function dialFirst(token: Token): Promise<{ conn: Connection; host: string; port: number; fingerprint: string }> {
  const failed: string[] = [];
  for (const b of token.brokers) {
    const { host, port } = hostPort(b.address);
    try {
      const conn = await connectBroker({ host, port, vhost: token.vhost, user: token.user, password: token.secret, fingerprint: b.fingerprint }, { name: `mesh-host enrol ${token.node}` });
      return { conn, host, port, fingerprint: b.fingerprint };
    } catch (err) {
      if ((err as Error).message.includes('ACCESS_REFUSED') || (err as Error).message.includes('403')) {
        throw new EnrolError(`the broker refused this token's account (${token.node}): the token was spent, replaced or the node retired. Ask the operator for a new one (mesh token issue ${token.node}).`, { cause: err });
      }
      // A single broker fails as it always did, with its own error (L2's full sentence for a wrong certificate).
      if (token.brokers.length === 1) throw err;
      failed.push(`${b.address}: ${(err as Error).message}`);
    }
  }
  throw new EnrolError(`no broker of this token answered: ${failed.join('; ')}`);
}
