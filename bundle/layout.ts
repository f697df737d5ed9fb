// Where the first node keeps what it carries, and on which ports. One state
// folder holds the store's cluster, the broker's data and certificate, the
// store URLs and the operator's wrappers, so a lab machine (or a test) can run
// a whole first node under a folder of its own and never meet the system's
// own PostgreSQL or RabbitMQ: every port here differs from their defaults
// except 5671, which nothing of the system's listens on.
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONTEXTS, storeVariable, type Context } from '../src/store/contexts.js';
import { SERVE_CONTEXTS } from '../src/serve/context.js';
import { CONSOLE_CONTEXTS } from '../src/console/contexts.js';
import { refuse } from '../src/sys/errors.js';

export interface Ports {
  /** TLS, what nodes dial: the one port the broker opens off loopback. */
  amqps: number;
  /** Plaintext AMQP on loopback only: the control plane's own hop. */
  amqp: number;
  /** The management API on loopback: accounts, and the bundle's own waits. */
  mgmt: number;
  dist: number;
  epmd: number;
  pg: number;
  /** WireGuard's UDP port, opened in the base ruleset. */
  wg: number;
  /** The ssh port the ruleset keeps open, so an operator over ssh is never locked out. */
  ssh: number;
}

export const DEFAULT_PORTS: Ports = {
  amqps: 5671,
  amqp: 5673,
  mgmt: 15673,
  dist: 25673,
  epmd: 4373,
  pg: 5433,
  wg: 51820,
  ssh: 22,
};

/** Where declarations may write on a machine unless its install says otherwise (MESH_HOST_ROOTS). */
export const DEFAULT_ROOTS = '/etc:/srv:/opt:/var/lib:/usr/local';

/** The agent's own folder unless its install says otherwise (MESH_HOST_DIR). */
export const DEFAULT_HOST_DIR = '/var/lib/mesh-host';

export interface Options {
  state: string;
  home: string;
  hostDir: string;
  name: string;
  site: string;
  /** The address nodes dial for the broker (the certificate's name too). */
  publicHost: string;
  /** HOST:PORT others dial for this node's overlay. */
  dialable: string;
  ports: Ports;
  /** MESH_HOST_ROOTS of this machine's host. */
  roots: string[];
  /** Knobs handed to mesh-host run (no secrets: intervals, folders). */
  hostEnv: Record<string, string>;
  /** Addresses the store listens on besides 127.0.0.1 (a primary's overlay address, for its standby); none by default. */
  pgListen?: string[];
  /** ADDRESS:PORT for mesh console, when the operator asked for it (--console); no console otherwise. */
  console?: string;
  /**
   * This node's overlay address, once its broker is a node of a cluster
   * (STATE/rabbitmq/cluster.json): the Erlang node is mesh@ADDRESS and epmd
   * and the distribution listen there (and on loopback), never on a public
   * address. Absent: a broker alone, mesh@localhost, all of it on loopback.
   */
  brokerAddress?: string;
  /**
   * The users the daemons run as (P1), set where systemd runs them: each reads
   * its own files and no other's. Absent (the lab, a container: mesh-host
   * supervises the services), every service runs as root, PostgreSQL as postgres.
   */
  users?: Users;
  /** The mesh node name in its Erlang node's name (mesh-NAME@ADDRESS: epmd knows a machine's nodes by that part), kept with the address. */
  brokerName?: string;
}

/**
 * One system user a daemon (P1): serve's alone reads MESH_HOME (the signing
 * key, broker.json); the broker's reads its own folder; the console's reads
 * the URLs of its contexts and nothing else.
 */
export interface Users {
  serve: string;
  console: string;
  broker: string;
}
export const DAEMON_USERS: Users = { serve: 'mesh', console: 'mesh-console', broker: 'mesh-broker' };

/** The repository this bundle runs from: services exec its compiled programs. */
export const DIST = fileURLToPath(new URL('..', import.meta.url));
export const MESH_JS = join(DIST, 'src/cli/mesh.js');
export const MESH_HOST_JS = join(DIST, 'host/cli.js');

export function paths(o: Options) {
  const s = o.state;
  return {
    pg: join(s, 'postgres'),
    pgData: join(s, 'postgres/data'),
    pgSock: join(s, 'postgres/socket'),
    rabbit: join(s, 'rabbitmq'),
    rabbitConf: join(s, 'rabbitmq/rabbitmq.conf'),
    rabbitPlugins: join(s, 'rabbitmq/enabled_plugins'),
    rabbitEnv: join(s, 'rabbitmq/rabbitmq-env.conf'),
    rabbitAdmin: join(s, 'rabbitmq/admin.password'),
    tls: join(s, 'rabbitmq/tls'),
    /** The Erlang cookie: in the broker's HOME, 0600; what lets a node join the cluster. */
    rabbitCookie: join(s, 'rabbitmq/.erlang.cookie'),
    /** {"address": OVERLAY, "name": NODE}: this node's broker is a node of a cluster (Options.brokerAddress, brokerName). */
    rabbitCluster: join(s, 'rabbitmq/cluster.json'),
    /** What the first node hands a new broker node (0600; copied there, removed once used). */
    handOver: (node: string) => join(s, 'rabbitmq', `hand-over-${node}.json`),
    /** The quorum queues' definitions while the broker is renamed (broker_cluster.ts); gone once declared again. */
    quorumKept: join(s, 'rabbitmq/quorum-kept.json'),
    store: join(s, 'store'),
    storeFile: (ctx: string) => join(s, 'store', `${ctx}.url`),
    /** The console's own copies of its contexts' URLs: its user's, no other daemon's (P1). */
    consoleStore: join(s, 'console'),
    consoleStoreFile: (ctx: string) => join(s, 'console', `${ctx}.url`),
    nft: join(s, 'nftables.nft'),
    bin: join(s, 'bin'),
    brokerJson: join(o.home, 'broker.json'),
  };
}

/** MESH_HOME and every MESH_STORE_* as paths: what the operator's `mesh` and the installer are handed. */
export function controlEnv(o: Options, contexts: readonly Context[] = CONTEXTS): Record<string, string> {
  const env: Record<string, string> = { MESH_HOME: o.home };
  for (const ctx of contexts) env[storeVariable(ctx)] = paths(o).storeFile(ctx);
  return env;
}

/** serve's: MESH_HOME and the URLs of the contexts it works in, never audit's (P1). */
export const serveEnv = (o: Options) => controlEnv(o, SERVE_CONTEXTS);

/** The console's: its contexts' URLs, its own copies, and no MESH_HOME: it signs nothing and dials no broker (P1). */
export function consoleEnv(o: Options): Record<string, string> {
  const env: Record<string, string> = {};
  for (const ctx of CONSOLE_CONTEXTS) env[storeVariable(ctx)] = paths(o).consoleStoreFile(ctx);
  return env;
}

export function hostEnv(o: Options): Record<string, string> {
  return { MESH_HOST_DIR: o.hostDir, MESH_HOST_ROOTS: o.roots.join(':'), ...o.hostEnv };
}

/** A node name from the machine's: lower-case, [a-z][a-z0-9-]*. */
export function defaultName(): string {
  const n = hostname()
    .toLowerCase()
    .split('.')[0]!
    .replace(/[^a-z0-9-]/g, '-')
    .replace(/^[^a-z]+/, '');
  return (n || 'first').slice(0, 63);
}

/** The first address off loopback: where nodes on the network dial the broker. */
export function defaultPublicHost(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw refuse('MSHL0', 'this machine has no IPv4 address off loopback');
}
