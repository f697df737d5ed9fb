// The broker on the first node: a RabbitMQ node of its own (node name, ports,
// epmd port, Erlang cookie in its own HOME, data and logs under the state
// folder), TLS on 5671 with a certificate it generated itself -- nodes pin its
// fingerprint -- plaintext AMQP and the management API on loopback only, for
// the control plane. The admin password is generated once into a 0600 file
// and reaches RabbitMQ only through its 0600 config file.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { isRunning } from '../host/apply/proc.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes, X509Certificate } from 'node:crypto';
import { writeAtomic } from '../src/sys/atomic.js';
import { ManagementApi } from '../src/broker/management.js';
import { run as exec } from '../src/sys/proc.js';
import type { Resource } from '../src/wire/resources.js';
import { file } from './carried.js';
import type { Spec } from './units.js';
import { paths, type Options } from './layout.js';
import { refuse } from '../src/sys/errors.js';
import { isNodeName } from '../src/wire/names.js';

export const ADMIN = 'mesh-admin';
export const VHOST = 'mesh';
const BIN = '/usr/lib/rabbitmq/bin';

export interface BrokerSecrets {
  password: string;
  cert: string;
  key: string;
  fingerprint: string;
}

/** The admin password and the certificate, each made once. Returns them and what was made. */
export async function ensureSecrets(o: Options): Promise<{ secrets: BrokerSecrets; made: string[] }> {
  const p = paths(o);
  const made: string[] = [];
  mkdirSync(p.tls, { recursive: true, mode: 0o700 });
  if (!statSync(p.rabbitAdmin, { throwIfNoEntry: false })) {
    await writeAtomic(p.rabbitAdmin, randomBytes(24).toString('base64url') + '\n', 0o600);
    made.push('broker admin password');
  }
  const cert = join(p.tls, 'broker.pem');
  const key = join(p.tls, 'broker.key');
  if (!statSync(cert, { throwIfNoEntry: false }) || !statSync(key, { throwIfNoEntry: false })) {
    const made1 = await makeCertificate(o.publicHost, p.tls);
    await writeAtomic(key, made1.key, 0o600);
    await writeAtomic(cert, made1.cert, 0o644);
    made.push(`TLS certificate for ${o.publicHost}`);
  }
  const password = readFileSync(p.rabbitAdmin, 'utf8').trim();
  const fingerprint = new X509Certificate(readFileSync(cert)).fingerprint256;
  return { secrets: { password, cert, key, fingerprint }, made };
}

/**
 * A broker's own certificate and key for HOST (its name and subjectAltName),
 * made in a 0700 scratch folder under DIR that is removed at once: the key
 * is handed back, for the caller to write 0600 where it belongs (this
 * machine's broker, or the hand-over file of a new broker node).
 */
export async function makeCertificate(
  host: string,
  dir: string,
): Promise<{ cert: string; key: string; fingerprint: string }> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const scratch = mkdtempSync(join(dir, '.cert-'));
  try {
    const key = join(scratch, 'key.pem');
    const cert = join(scratch, 'cert.pem');
    await exec('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '3650',
      '-subj',
      `/CN=${host}`,
      '-addext',
      `subjectAltName=${/^[\d.]+$/.test(host) ? 'IP' : 'DNS'}:${host}`,
    ]);
    const pem = readFileSync(cert, 'utf8');
    return { cert: pem, key: readFileSync(key, 'utf8'), fingerprint: new X509Certificate(pem).fingerprint256 };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** What the broker's config says, wherever it runs. */
export interface BrokerConf {
  amqp: number;
  amqps: number;
  mgmt: number;
  /** Where TLS listens: every address on a first node, one address in a lab. */
  amqpsAddress?: string;
  user: string;
  password: string;
  cert: string;
  key: string;
  /**
   * A broker node's certificate fingerprint, written as a comment: the config
   * then changes with the certificate, and the broker restarts to serve the
   * one hosts now pin (D4). Set for a node of a cluster.
   */
  certFingerprint?: string;
  /** Management statistics interval; tests set it long, the broker's own default is 5 s. */
  statsIntervalMs?: number;
}

/**
 * The broker's config file: the one writer, so the first node and the test
 * harness run the same broker. TLS is the only listener off loopback; the
 * admin password is in this 0600 file, never on a command line.
 */
export function brokerConf(c: BrokerConf): string {
  return [
    '# Written by mesh. TLS is the only listener off loopback.',
    ...(c.certFingerprint ? [`# certificate ${c.certFingerprint}`] : []),
    `listeners.tcp.1 = 127.0.0.1:${c.amqp}`,
    `listeners.ssl.1 = ${c.amqpsAddress ?? '0.0.0.0'}:${c.amqps}`,
    `ssl_options.cacertfile = ${c.cert}`,
    `ssl_options.certfile = ${c.cert}`,
    `ssl_options.keyfile = ${c.key}`,
    'ssl_options.verify = verify_none',
    'ssl_options.fail_if_no_peer_cert = false',
    'management.tcp.ip = 127.0.0.1',
    `management.tcp.port = ${c.mgmt}`,
    `default_vhost = ${VHOST}`,
    `default_user = ${c.user}`,
    `default_pass = ${c.password}`,
    'default_user_tags.administrator = true',
    'default_permissions.configure = .*',
    'default_permissions.read = .*',
    'default_permissions.write = .*',
    'log.console = false',
    'log.file.level = warning',
    ...(c.statsIntervalMs ? [`collect_statistics_interval = ${c.statsIntervalMs}`] : []),
    // Nothing on the mesh's wire needs more (a declaration is at most 8 MiB):
    // the broker refuses it before anyone parses it.
    'max_message_size = 16777216',
    '',
  ].join('\n');
}

/** The Erlang node of a broker alone: everything Erlang on loopback. */
export const LOCAL_NODE = 'mesh@localhost';

/**
 * The Erlang node of a broker in a cluster: mesh-NODE@OVERLAY-ADDRESS (long
 * names). The address is what other broker nodes reach, with no resolver in
 * between; the mesh node's name makes it one of its own to epmd and to a
 * person reading cluster_status.
 */
export function clusterNodeName(address: string, node: string): string {
  erlAddress(address);
  if (!isNodeName(node))
    throw refuse('MSHD9', `${JSON.stringify(node)} is not a node name, so mesh-NAME@ADDRESS is no Erlang node name`);
  return `mesh-${node}@${address}`;
}

/** An IPv4 address as Erlang's inet_dist_use_interface takes it: {10,99,0,1}. */
export function erlAddress(address: string): string {
  const parts = address.split('.');
  if (parts.length !== 4 || parts.some((x) => !/^\d{1,3}$/.test(x) || Number(x) > 255)) {
    throw refuse('MSHD8', `${JSON.stringify(address)} is not an IPv4 overlay address`);
  }
  return `{${parts.map(Number).join(',')}}`;
}

/**
 * The broker's environment: a node of its own, its files under DIR (HOME
 * holds its Erlang cookie). DIST_ADDRESS: the node is one of a cluster and
 * its epmd and distribution listen on that address (its overlay address,
 * never a public one) besides loopback, with long node names (mesh@ADDRESS).
 */
export function brokerEnv(
  dir: string,
  nodename: string,
  ports: { dist: number; epmd: number },
  distAddress?: string,
): Record<string, string> {
  const dist = distAddress ? erlAddress(distAddress) : '{127,0,0,1}';
  return {
    HOME: dir,
    RABBITMQ_NODENAME: nodename,
    RABBITMQ_DIST_PORT: String(ports.dist),
    ERL_EPMD_PORT: String(ports.epmd),
    // X1: epmd and the Erlang distribution listen on loopback only. Both were
    // on 0.0.0.0 (4373, 25673), reachable from every spoke over the overlay.
    // The CLI tools (rabbitmqctl) reach the node over loopback too, and their
    // own distribution listener is kept there as well. The scripts word-split
    // these with globbing off, so the braces reach erl as written.
    // In a cluster, the overlay address too (other broker nodes ask epmd
    // there for the distribution port; the firewall admits both from the
    // other broker nodes alone, X2), and the distribution listens only there.
    ERL_EPMD_ADDRESS: distAddress && distAddress !== '127.0.0.1' ? `127.0.0.1,${distAddress}` : '127.0.0.1',
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: `-kernel inet_dist_use_interface ${dist}`,
    ...(distAddress ? { RABBITMQ_USE_LONGNAME: 'true' } : {}),
    RABBITMQ_CTL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_PID_FILE: join(dir, 'rabbit.pid'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
    // Erlang writes a crash dump into its working directory unless told: once
    // it landed in the repository root (697 KB, committed). It lives with the broker.
    ERL_CRASH_DUMP: join(dir, 'erl_crash.dump'),
  };
}

export const PLUGINS = '[rabbitmq_management].\n';

export function brokerResources(o: Options, s: BrokerSecrets): Resource[] {
  const p = paths(o);
  const conf = brokerConf({
    amqp: o.ports.amqp,
    amqps: o.ports.amqps,
    mgmt: o.ports.mgmt,
    user: ADMIN,
    password: s.password,
    cert: s.cert,
    key: s.key,
    ...(o.brokerAddress ? { certFingerprint: s.fingerprint } : {}),
  });
  return [
    // The broker's user reads its config (it holds the admin password); no other daemon's user does (P1).
    file(p.rabbitConf, conf, '0600', o.users?.broker),
    file(p.rabbitPlugins, PLUGINS, '0644'),
    file(p.rabbitEnv, '# empty: everything is in the service environment\n', '0644'),
  ];
}

export function managementApi(o: Options, password: string): ManagementApi {
  return new ManagementApi({ url: `http://127.0.0.1:${o.ports.mgmt}`, user: ADMIN, password });
}

/** The script a clustered broker starts through: it renames a broker made alone (mesh@localhost) first. */
export const START_SCRIPT = fileURLToPath(new URL('../../bundle/rabbitmq-start.sh', import.meta.url));

/** The Erlang node this machine's broker runs as. */
export function brokerNode(o: Options): string {
  return o.brokerAddress ? clusterNodeName(o.brokerAddress, o.brokerName ?? o.name) : LOCAL_NODE;
}

/**
 * The broker as a service: its environment holds paths and ports, never the
 * password. In a cluster it starts through START_SCRIPT, which renames the
 * data of a broker that ran alone (mesh@localhost: its accounts, queues and
 * messages) to mesh@ADDRESS before the node starts, so a first node joins a
 * cluster without a node re-enrolled (quorum queues are carried by the
 * bundle around it: broker_cluster.ts holdAndDrainQuorum).
 */
export function brokerSpec(o: Options): Spec {
  const p = paths(o);
  const node = brokerNode(o);
  const env = brokerEnv(p.rabbit, node, o.ports, o.brokerAddress);
  return {
    name: 'mesh-rabbitmq',
    description: 'mesh broker (RabbitMQ: TLS on the network, the rest on loopback)',
    profile: 'service',
    after: ['mesh-nftables'],
    // P1: its own user, which reads its own folder and neither MESH_HOME nor a store URL.
    ...(o.users ? { user: o.users.broker } : {}),
    env: o.brokerAddress ? { ...env, MESH_RABBITMQ_RENAME_FROM: LOCAL_NODE } : env,
    exec: o.brokerAddress ? ['/bin/sh', START_SCRIPT] : [join(BIN, 'rabbitmq-server')],
    restartOn: [`file:${p.rabbitConf}`, `file:${p.rabbitPlugins}`],
  };
}

/** Until the management API answers: RabbitMQ is ready some seconds after it starts. */
export async function waitForBroker(o: Options, password: string, seconds = 180): Promise<void> {
  const api = managementApi(o, password);
  const pidFile = join(o.hostDir, 'services', 'mesh-rabbitmq.pid');
  const deadline = Date.now() + seconds * 1000;
  let said = Date.now();
  for (;;) {
    try {
      const r = await api.raw('GET', '/overview');
      if (r.ok) return;
      if (r.status === 401)
        throw new Error(
          `the broker on port ${o.ports.mgmt} refuses ${ADMIN}: its data predates ${paths(o).rabbitAdmin}; move ${join(paths(o).rabbit, 'mnesia')} away and run the bundle again.`,
        );
    } catch (err) {
      if ((err as Error).message.includes('refuses')) throw err;
    }
    // Where the bundle supervises it, a broker that died at start is said now, not in three minutes.
    const rec = existsSync(pidFile)
      ? (JSON.parse(readFileSync(pidFile, 'utf8')) as { pid: number; start: string })
      : null;
    if (rec && !(await isRunning(rec.pid, rec.start))) {
      throw new Error(
        `RabbitMQ exited as it started: see ${join(paths(o).rabbit, 'log')} and ${join(o.hostDir, 'services', 'mesh-rabbitmq.log')}.`,
      );
    }
    if (Date.now() > deadline)
      throw new Error(
        `RabbitMQ did not answer on 127.0.0.1:${o.ports.mgmt} within ${seconds}s: see ${join(paths(o).rabbit, 'log')}.`,
      );
    if (Date.now() - said > 10_000) {
      console.log('  waiting for RabbitMQ to start');
      said = Date.now();
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** The mesh's vhost, with the admin allowed everything in it. True when made. */
export async function ensureVhost(o: Options, password: string): Promise<boolean> {
  const api = managementApi(o, password);
  if (await api.hasVhost(VHOST)) return false;
  await api.putVhost(VHOST);
  await api.putPermissions(VHOST, ADMIN, { configure: '.*', write: '.*', read: '.*' });
  return true;
}

/** Until something consumes `queue` (the control plane, a host). */
export async function waitForConsumer(
  o: Options,
  password: string,
  queue: string,
  what: string,
  seconds = 180,
): Promise<void> {
  const api = managementApi(o, password);
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const q = await api.queue(VHOST, queue).catch(() => undefined);
    if (Number(q?.consumers ?? 0) > 0) return;
    if (Date.now() > deadline)
      throw new Error(`${what} did not start consuming ${queue} within ${seconds}s: see its log.`);
    await new Promise((res) => setTimeout(res, 300));
  }
}
