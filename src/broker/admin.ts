// The control plane's own hops to the broker, from its home's broker.json:
// loopback (or private) AMQP and the management API, both as the admin
// account; a cluster's every node, tried in turn. Here, not in src/home/, so
// home stays below broker (the arrows only run down).
import type { BrokerConfig, BrokerHop } from '../home/home.js';
import { refuse } from '../sys/errors.js';
import { HOST, isPort, isFingerprint } from '../wire/names.js';
import type { Endpoint } from './connect.js';
import type { Management } from './accounts.js';
import { Turns } from './turns.js';

const list = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

/**
 * One entry of broker.json's "amqp", checked: a typo here would otherwise
 * surface as a connection error naming neither the file nor the entry (or,
 * a fingerprint in the wrong form, as a pin mismatch that reads like an impostor).
 */
function hop(a: unknown, i: number, n: number): BrokerHop {
  const at = n > 1 ? `broker.json's "amqp" entry ${i + 1}` : 'broker.json\'s "amqp"';
  const form =
    '{"host": HOST, "port": PORT} for a plaintext hop on loopback or a private address, or with "fingerprint" for another node\'s TLS listener';
  if (typeof a !== 'object' || a === null || Array.isArray(a))
    throw refuse('MSHJ0', `${at} is not a broker node`, `give ${form}`);
  const { host, port, fingerprint } = a as Record<string, unknown>;
  if (typeof host !== 'string' || !HOST.test(host))
    throw refuse('MSHJ1', `${at} has no usable "host" (${JSON.stringify(host)})`);
  if (!isPort(port)) throw refuse('MSHJ2', `${at} (${host}) has no usable "port" (${JSON.stringify(port)})`);
  if (fingerprint === undefined) return { host, port };
  if (!isFingerprint(fingerprint)) {
    throw refuse('MSHJ3', `${at} (${host}:${port}) has a "fingerprint" that is not a SHA-256 fingerprint`);
  }
  return { host, port, fingerprint };
}

/** Every AMQP endpoint broker.json names, in its order; one with a fingerprint is dialled over TLS pinned to it. */
export function adminEndpoints(b: BrokerConfig): Endpoint[] {
  const all = list(b.amqp as unknown);
  if (all.length === 0)
    throw refuse('MSHJ4', 'broker.json\'s "amqp" is an empty list: there is no broker to connect to');
  return all.map((a, i) => {
    const { host, port, fingerprint } = hop(a, i, all.length);
    return { host, port, vhost: b.vhost, user: b.user, password: b.password, ...(fingerprint ? { fingerprint } : {}) };
  });
}

/** The first endpoint: for a command that connects once (a failure is said, and the command run again). */
export function adminEndpoint(b: BrokerConfig): Endpoint {
  return adminEndpoints(b)[0]!;
}

/** Turns over every endpoint: what a long-running connection (serve, its drain) reconnects with. */
export function adminTurns(b: BrokerConfig): Turns {
  return new Turns(adminEndpoints(b));
}

/** A cluster: several nodes named, or the one named said to be a node of one (the bundle's broker.json). */
export function clustered(b: BrokerConfig): boolean {
  return list(b.amqp).length > 1 || b.cluster === true;
}

export function management(b: BrokerConfig): Management {
  if (Array.isArray(b.management) && b.management.length === 0)
    throw refuse('MSHJ5', 'broker.json\'s "management" is an empty list: no management API is named');
  // On a cluster a node's queue must outlive the broker node it was made on, so quorum (W3).
  return {
    url: b.management,
    user: b.user,
    password: b.password,
    vhost: b.vhost,
    accountPrefix: b.accountPrefix,
    quorumNodeQueues: clustered(b),
  };
}
