// The control plane's own hops to the broker, from its home's broker.json:
// loopback (or private) AMQP and the management API, both as the admin
// account; a cluster's every node, tried in turn. Here, not in src/home/, so
// home stays below broker (the arrows only run down).
import type { BrokerConfig } from '../home/home.js';
import type { Endpoint } from './connect.js';
import type { Management } from './accounts.js';
import { Turns } from './turns.js';

const list = <T>(v: T | T[]): T[] => (Array.isArray(v) ? v : [v]);

/** Every AMQP endpoint broker.json names, in its order. */
export function adminEndpoints(b: BrokerConfig): Endpoint[] {
  return list(b.amqp).map((a) => ({ host: a.host, port: a.port, vhost: b.vhost, user: b.user, password: b.password }));
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
  // On a cluster a node's queue must outlive the broker node it was made on, so quorum (W3).
  return { url: b.management, user: b.user, password: b.password, vhost: b.vhost, accountPrefix: b.accountPrefix, quorumNodeQueues: clustered(b) };
}
