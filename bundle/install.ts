#!/usr/bin/env node
// The first-node installer: a bare Debian 12 machine, as root, becomes a mesh.
// In order: the base ruleset (before anything listens), the store, the broker,
// the control plane, and then the machine enrols against its own mesh and its
// host runs. Everything it raises is carried (D3): no declaration removes it.
// Idempotent: a second run looks at everything, changes nothing and says so.
//
//   node dist/bundle/install.js [--state DIR] [--public HOST] [--name NAME] ...
//   (bundle/install.sh ensures packages and builds first)
import { parseArgs } from 'node:util';
import { mkdirSync, chmodSync } from 'node:fs';
import { Carried } from './carried.js';
import { ruleset, loadRuleset, TABLE } from './nftables.js';
import { ensureCluster, postgresSpec, ensureContexts, migrateStore } from './postgres.js';
import {
  ensureSecrets,
  brokerResources,
  brokerSpec,
  brokerNode,
  waitForBroker,
  ensureVhost,
  waitForConsumer,
  managementApi,
  VHOST,
} from './rabbitmq.js';
import { clustered, markClustered, holdAndDrainQuorum, restoreQuorum } from './broker_cluster.js';
import { overlayAddress, handOverBroker } from './broker_hand_over.js';
import {
  controlResources,
  serveSpec,
  consoleSpec,
  hostSpec,
  wrapperResources,
  ensureSigningKey,
  enrolSelf,
  declareSelf,
  ensureFirstNodeOpenings,
} from './control.js';
import { file } from './carried.js';
import { carriedService, ensureUnits, hasSystemd, quietDistroListeners, UNIT_DIR, type Spec } from './units.js';
import {
  DAEMON_USERS,
  DEFAULT_PORTS,
  DEFAULT_ROOTS,
  DEFAULT_HOST_DIR,
  defaultName,
  defaultPublicHost,
  paths,
  type Options,
  type Ports,
} from './layout.js';
import { ensureUsers, ownHome, ownStore, ownBroker, ensureConsoleStore } from './users.js';
import { CONTROL_QUEUE } from '../src/broker/topology.js';
import { parseListen } from '../src/console/listen.js';
import { queueOf, nodeName, joinHostPort } from '../src/wire/names.js';
import { loadIdentity } from '../host/identity.js';
import { refuse } from '../src/sys/errors.js';
import { runMain } from './main.js';

const HELP = `Usage: install.js [options]   (as root)

Makes this machine the first node of a new mesh: nftables base ruleset, PostgreSQL
(a cluster of its own), RabbitMQ (TLS on 5671 with its own certificate), the control
plane, and this machine enrolled and running mesh-host. Run it again at any time:
it puts back what is missing and otherwise changes nothing.

  --state DIR        everything it carries lives here (default /var/lib/mesh)
  --home DIR         the control plane's MESH_HOME (default /etc/mesh, or STATE/home)
  --host-dir DIR     this machine's MESH_HOST_DIR (default /var/lib/mesh-host, or STATE/host)
  --name NAME        this node's name (default: the hostname)
  --site SITE        where it is (default: default)
  --public HOST      the address nodes dial for the broker (default: first IPv4 off loopback)
  --dialable H:P     where others dial this node's overlay (default: PUBLIC:WG-PORT)
  --roots A:B        paths declarations may write on this machine (default /etc:/srv:/opt:/var/lib:/usr/local)
  --host-env K=V     a variable for mesh-host run (repeatable; intervals, never secrets)
  --amqps-port N (5671)  --amqp-port N (5673)  --mgmt-port N (15673)  --dist-port N (25673)
  --epmd-port N (4373)   --pg-port N (5433)    --wg-port N (51820)
  --console A:P      also run mesh console (read-only web console) on A:P, e.g.
                     127.0.0.1:7780; none unless asked. Give a loopback or overlay
                     address: the firewall admits only what a module's opening says.
  --add-broker-node NAME   (with --broker-public HOST) on the first node, once
                     installed: make the enrolled node NAME a broker node of this
                     mesh. This node's broker becomes a node of a RabbitMQ
                     cluster (named by its overlay address; nothing it holds is
                     lost), NAME's TLS certificate is made and recorded (every
                     host pins it), and STATE/rabbitmq/hand-over-NAME.json (0600)
                     is written: copy it to NAME (scp), then there run
                       bash bundle/install.sh --broker-node --join THIS-NODE --hand-over FILE
                     Give the same other flags as the install.
  --broker-public HOST  the address nodes dial for NAME's broker (its certificate's name)
  --ssh-port N (22)  the ssh port the firewall keeps open. Input is closed by
                     default: only loopback, answers, the ICMP a network
                     needs, this port, the broker's TLS port and WireGuard get
                     in, so an operator over ssh is never locked out. Give the
                     port your sshd really listens on.

Every other service (epmd, the Erlang distribution, the management API,
PostgreSQL, plaintext AMQP) listens on loopback only.
`;

/** The options of an install: the layout's, and the broker node it adds, if any. */
type InstallOptions = Options & { addBroker?: { node: string; publicHost: string } };

function options(argv: string[]): InstallOptions {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      state: { type: 'string' },
      home: { type: 'string' },
      'host-dir': { type: 'string' },
      name: { type: 'string' },
      site: { type: 'string' },
      public: { type: 'string' },
      dialable: { type: 'string' },
      roots: { type: 'string' },
      'host-env': { type: 'string', multiple: true },
      console: { type: 'string' },
      'amqps-port': { type: 'string' },
      'amqp-port': { type: 'string' },
      'mgmt-port': { type: 'string' },
      'dist-port': { type: 'string' },
      'epmd-port': { type: 'string' },
      'pg-port': { type: 'string' },
      'wg-port': { type: 'string' },
      'ssh-port': { type: 'string' },
      'add-broker-node': { type: 'string' },
      'broker-public': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if ((v['add-broker-node'] === undefined) !== (v['broker-public'] === undefined)) {
    throw refuse('MSH90', 'only one of --add-broker-node and --broker-public was given');
  }
  if (v.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  const custom = v.state !== undefined && v.state !== '/var/lib/mesh';
  const state = v.state ?? '/var/lib/mesh';
  const ports = portsOf(v);
  const publicHost = v.public ?? defaultPublicHost();
  const hostEnv = hostEnvOf(v['host-env'] ?? []);
  return {
    state,
    home: v.home ?? (custom ? `${state}/home` : '/etc/mesh'),
    hostDir: v['host-dir'] ?? (custom ? `${state}/host` : DEFAULT_HOST_DIR),
    name: nodeName(v.name ?? defaultName()),
    site: nodeName(v.site ?? 'default', 'site'),
    publicHost,
    dialable: v.dialable ?? joinHostPort(publicHost, ports.wg),
    ports,
    roots: (v.roots ?? DEFAULT_ROOTS).split(':').filter(Boolean),
    hostEnv,
    // Checked here, before anything is installed: a typo must not wait for the unit to fail.
    console: v.console === undefined ? undefined : (parseListen(v.console), v.console),
    brokerAddress: clustered(state)?.address,
    brokerName: clustered(state)?.name,
    ...(v['add-broker-node']
      ? { addBroker: { node: nodeName(v['add-broker-node']), publicHost: v['broker-public']! } }
      : {}),
  };
}

/** The ports the flags give (--amqps-port ...), each checked, the default for each not given. */
function portsOf(v: Record<string, unknown>): Ports {
  const port = (k: keyof Ports, flag: string) => {
    const s = (v as Record<string, string | undefined>)[flag];
    if (s === undefined) return DEFAULT_PORTS[k];
    const n = Number(s);
    if (!Number.isInteger(n) || n < 1 || n > 65535)
      throw refuse('MSH91', `--${flag} ${JSON.stringify(s)} is not a port number`);
    return n;
  };
  return {
    amqps: port('amqps', 'amqps-port'),
    amqp: port('amqp', 'amqp-port'),
    mgmt: port('mgmt', 'mgmt-port'),
    dist: port('dist', 'dist-port'),
    epmd: port('epmd', 'epmd-port'),
    pg: port('pg', 'pg-port'),
    wg: port('wg', 'wg-port'),
    ssh: port('ssh', 'ssh-port'),
  };
}

/** The --host-env MESH_NAME=value pairs, as the host's environment entries. */
function hostEnvOf(pairs: string[]): Record<string, string> {
  const hostEnv: Record<string, string> = {};
  for (const kv of pairs) {
    const m = /^(MESH_[A-Z0-9_]+)=(.*)$/.exec(kv);
    if (!m) throw refuse('MSH92', `--host-env ${JSON.stringify(kv)} is not MESH_NAME=value`);
    hostEnv[m[1]!] = m[2]!;
  }
  return hostEnv;
}

/** What every step of the install shares: the options, the paths, the broker's secrets and the carried plan. */
interface Install {
  o: InstallOptions;
  p: ReturnType<typeof paths>;
  broker: Awaited<ReturnType<typeof ensureSecrets>>;
  systemd: boolean;
  specs: ReturnType<typeof specsOf>;
  parts: ReturnType<typeof planOf>;
  carried: Carried;
  /** Units written again for SPECS (systemd only), given what was changed so far. */
  units: (...s: Spec[]) => Promise<string[]>;
  /** Say what a step changed, and count it. */
  step: (what: string, changed: string[]) => void;
  /** What handing the home to serve's user changed, said with the control plane. */
  homeOwned: string[];
}

async function main(): Promise<void> {
  const o = options(process.argv.slice(2));
  if (process.getuid?.() !== 0)
    throw refuse('MSH93', 'the first-node bundle runs as root (it starts PostgreSQL as postgres and loads nftables)');
  const p = paths(o);
  // Refused before anything is made: a broker node is added only from a machine this install enrolled.
  const self = clusterSelf(o);
  const said: string[] = [];
  const step = (what: string, changed: string[]) => {
    console.log(`${what}: ${changed.length ? changed.join(', ') : 'as it was'}`);
    said.push(...changed);
  };
  console.log(`mesh first node ${o.name} (site ${o.site}), state in ${o.state}`);
  // Under systemd each service is a unit file the bundle carries; elsewhere a
  // service mesh-host supervises (units.ts). Same specs, same order.
  const systemd = hasSystemd();
  // P1: where systemd runs the daemons, each as its own user. Where mesh-host
  // supervises them (the lab, a container) they share the machine's users.
  if (systemd) o.users = DAEMON_USERS;
  if (o.users) step('users', await ensureUsers(o.users));
  makeDirectories(o, p);
  const homeOwned = await ownHome(o);
  const renaming = await becomeClusterNode(o, self);
  const broker = await ensureSecrets(o);
  const specs = specsOf(o, p);
  const parts = planOf(o, p, broker, specs, systemd);
  const roots = [o.state, o.home, ...(systemd ? [UNIT_DIR] : [])];
  const carried = new Carried(parts.plan, o.hostDir, roots, (l) => console.log(`  ${l}`));
  await carried.load();
  const units = async (...s: Spec[]) => (systemd ? ensureUnits(s, new Set(carried.changed)) : []);
  const x: Install = { o, p, broker, systemd, specs, parts, carried, units, step, homeOwned };

  await raiseFirewall(x);
  await raiseStore(x);
  await raiseBroker(x, renaming);
  const mesh = await raiseControlPlane(x);
  const name = await raiseHost(x);
  if (o.addBroker) await handOver(x, name, o.addBroker);
  if (said.length === 0)
    console.log(
      `nothing changed: ${name} already carries nftables, the store, the broker, the control plane and its host.`,
    );
  else console.log(`${name} is the first node of mesh ${mesh}: ${said.length} change(s).`);
  console.log(
    `operate it with ${p.bin}/mesh (e.g. ${p.bin}/mesh node list); enrol others with ${p.bin}/mesh token issue NAME`,
  );
}

function makeDirectories(o: Options, p: ReturnType<typeof paths>): void {
  // The postgres user must be able to walk down to its cluster.
  for (const d of [o.state, p.pg]) {
    mkdirSync(d, { recursive: true, mode: 0o755 });
    chmodSync(d, 0o755);
  }
  mkdirSync(o.home, { recursive: true, mode: 0o700 });
  mkdirSync(o.hostDir, { recursive: true, mode: 0o700 });
}

/** This machine's name when adding a broker node makes its broker a cluster node first; not enrolled, refused (MSH94). */
function clusterSelf(o: InstallOptions): string | undefined {
  if (!o.addBroker || o.brokerAddress) return undefined;
  const self = loadIdentity(o.hostDir)?.name;
  if (!self)
    throw refuse('MSH94', 'this machine is not enrolled yet', 'run the install without --add-broker-node first');
  return self;
}

/**
 * Adding a broker node: this node's broker becomes a node of a cluster
 * first, named by its overlay address (the store says it; the first install
 * enrolled this node), so the plan raises it so (renamed, restarted). True when it does.
 */
async function becomeClusterNode(o: InstallOptions, self: string | undefined): Promise<boolean> {
  if (!self) return false;
  o.brokerAddress = await overlayAddress(o, self);
  o.brokerName = self;
  console.log(
    `broker: becomes a node of a cluster as ${brokerNode(o)} (epmd and the Erlang distribution on ${o.brokerAddress} and loopback)`,
  );
  return true;
}

function specsOf(o: Options, p: ReturnType<typeof paths>) {
  const nft: Spec = {
    name: 'mesh-nftables',
    description: 'mesh firewall base (table inet mesh, before the network)',
    profile: 'oneshot',
    exec: ['/usr/sbin/nft', '-f', p.nft],
    restartOn: [`file:${p.nft}`],
  };
  return {
    nft,
    pg: postgresSpec(o),
    rabbit: brokerSpec(o),
    serve: serveSpec(o),
    host: hostSpec(o),
    console: o.console ? consoleSpec(o, o.console) : undefined,
  };
}

/** Every resource the bundle carries, in the order it raises them, and where each step's part ends. */
function planOf(
  o: Options,
  p: ReturnType<typeof paths>,
  broker: Awaited<ReturnType<typeof ensureSecrets>>,
  specs: ReturnType<typeof specsOf>,
  systemd: boolean,
) {
  const raise = (s: Spec) => carriedService(s, systemd);
  const nft = file(p.nft, ruleset(o.ports), '0644');
  const nftUnit = systemd ? [raise(specs.nft)] : [];
  const pg = raise(specs.pg);
  const rabbit = [...brokerResources(o, broker.secrets), raise(specs.rabbit)];
  const control = [
    ...controlResources(o, broker.secrets),
    raise(specs.serve),
    ...(specs.console ? [raise(specs.console)] : []),
  ];
  const host = [raise(specs.host)];
  const plan = [nft, ...nftUnit, ...wrapperResources(o), pg, ...rabbit, ...control, ...host];
  return { plan, nft, nftUnit, pg, rabbit, control, host };
}

/** 054: the table is in place before the store and the broker listen. */
async function raiseFirewall({ p, parts, carried, units, systemd, specs, step }: Install): Promise<void> {
  const nftChanged = await carried.upTo((parts.nftUnit[0] ?? parts.nft).id);
  const nftUnits = [...(await units(specs.nft)), ...(systemd ? await quietDistroListeners() : [])];
  const loaded = await loadRuleset(p.nft, !systemd && nftChanged.includes(parts.nft.id));
  step('nftables', [...nftChanged, ...nftUnits, ...(loaded ? [`loaded table ${TABLE}`] : [])]);
}

async function raiseStore({ o, parts, carried, units, specs, step }: Install): Promise<void> {
  const cluster = await ensureCluster(o);
  const pgUp = [...(await carried.upTo(parts.pg.id)), ...(await units(specs.pg))];
  const contexts = [...(await ensureContexts(o)), ...(await ownStore(o)), ...(await ensureConsoleStore(o))];
  const ran = await migrateStore(o);
  step('store', [
    ...(cluster ? ['initdb'] : []),
    ...pgUp,
    ...contexts,
    ...(ran.length ? [`migrations ${ran.join(', ')}`] : []),
  ]);
}

async function raiseBroker(
  { o, broker, parts, carried, units, specs, step }: Install,
  renaming: boolean,
): Promise<void> {
  // The rename drops quorum queues: publishers held and those queues drained and kept first (broker_cluster.ts).
  const alone = { ...o, brokerAddress: undefined };
  if (renaming) await holdAndDrainQuorum(alone, managementApi(o, broker.secrets.password), VHOST, paths(o).quorumKept);
  if (renaming) await markClustered(o, o.brokerAddress!, o.brokerName!);
  const rabbitUp = [
    ...(await ownBroker(o)),
    ...(await carried.upTo(parts.rabbit.at(-1)!.id)),
    ...(await units(specs.rabbit)),
  ];
  await waitForBroker(o, broker.secrets.password);
  if (renaming) rabbitUp.push(`renamed to ${brokerNode(o)}`);
  rabbitUp.push(...(await restoreQuorum(managementApi(o, broker.secrets.password), VHOST, paths(o).quorumKept)));
  const vhost = await ensureVhost(o, broker.secrets.password);
  step('broker', [...broker.made, ...rabbitUp, ...(vhost ? ['vhost mesh'] : [])]);
}

/** The signing key, serve (and the console), waited for until serve consumes; the mesh's name. */
async function raiseControlPlane({
  o,
  broker,
  parts,
  carried,
  units,
  specs,
  step,
  homeOwned,
}: Install): Promise<string> {
  const key = await ensureSigningKey(o);
  const serveUp = [
    ...homeOwned,
    ...(await ownHome(o)),
    ...(await carried.upTo(parts.control.at(-1)!.id)),
    ...(await units(specs.serve, ...(specs.console ? [specs.console] : []))),
  ];
  await waitForConsumer(o, broker.secrets.password, CONTROL_QUEUE, 'mesh serve');
  step('control plane', [...(key.made ? [`signing key (mesh ${key.mesh})`] : []), ...serveUp]);
  return key.mesh;
}

/** This machine enrolled, its mesh-host running, its openings made and its declaration owed; its name. */
async function raiseHost({ o, broker, parts, carried, units, specs, step }: Install): Promise<string> {
  const enrolled = await enrolSelf(o);
  const name = loadIdentity(o.hostDir)!.name;
  const hostUp = [...(await carried.upTo(parts.host.at(-1)!.id)), ...(await units(specs.host))];
  await waitForConsumer(o, broker.secrets.password, queueOf(name), 'mesh-host run');
  const opened = await ensureFirstNodeOpenings(o, name);
  const serial = await declareSelf(o);
  step('host', [
    ...(enrolled ? [`enrolled as ${enrolled}`] : []),
    ...hostUp,
    ...opened,
    ...(serial !== null ? [`declaration ${serial} sent`] : []),
  ]);
  return name;
}

async function handOver(
  { o, step }: Install,
  name: string,
  add: NonNullable<InstallOptions['addBroker']>,
): Promise<void> {
  const r = await handOverBroker(o, name, add.node, add.publicHost);
  step('broker node', r.changed);
  console.log(
    `copy ${r.file} (0600: it holds the cluster's Erlang cookie) to ${add.node}, e.g. scp -p, remove it here, then on ${add.node} as root:`,
  );
  console.log(
    `  bash /opt/mesh/bundle/install.sh --broker-node --join ${name} --hand-over /root/${r.file.split('/').at(-1)}`,
  );
}

runMain(main);
