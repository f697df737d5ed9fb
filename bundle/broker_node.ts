#!/usr/bin/env node
// A new broker node's step (bundle/broker_cluster.ts says the whole of it),
// on a machine already enrolled in the mesh, as root:
//
//   bash bundle/install.sh --broker-node --join FIRST --hand-over FILE
//
// FILE is what `install.sh --add-broker-node NAME` wrote on FIRST (copied
// here over ssh). This machine then runs a broker of its own (a carried
// service, as the first node's: a systemd unit where it boots with systemd,
// else supervised by its mesh-host), with the certificate made for it and
// the cluster's Erlang cookie, and joins FIRST's cluster. Safe to run again.
import { parseArgs } from 'node:util';
import { mkdirSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { Carried } from './carried.js';
import { carriedService, ensureUnits, hasSystemd, quietDistroListeners, UNIT_DIR } from './units.js';
import { brokerResources, brokerSpec, brokerNode, waitForBroker, type BrokerSecrets } from './rabbitmq.js';
import {
  readHandOver,
  markClustered,
  waitReachable,
  joinCluster,
  clusterStatus,
  removeHandOver,
  type HandOver,
} from './broker_cluster.js';
import { DAEMON_USERS, DEFAULT_PORTS, paths, type Options } from './layout.js';
import { ensureUsers, ownBroker } from './users.js';
import { writeAtomic } from '../src/sys/atomic.js';
import { nodeName } from '../src/wire/names.js';
import { loadIdentity } from '../host/identity.js';
import { refuse } from '../src/sys/errors.js';
import { runMain } from './main.js';

const HELP = `Usage: install.sh --broker-node --join FIRST --hand-over FILE [options]   (as root)

Makes this machine, already enrolled in the mesh, a broker node joined to the
RabbitMQ cluster of FIRST (the first node). FILE is what FIRST wrote with
  install.sh --add-broker-node THIS-NODE --broker-public HOST
copied here (scp -p; it must be 0600: it holds the cluster's Erlang cookie).
It is removed once used; to run this again, the first node's step writes a
new one (a second run changes nothing else).

  --join FIRST       the first node's name (checked against FILE)
  --hand-over FILE   the hand-over file
  --state DIR        the broker's data lives under DIR/rabbitmq (default /var/lib/mesh)
  --host-dir DIR     this machine's MESH_HOST_DIR (default /var/lib/mesh-host)

The broker listens for TLS on the mesh's broker port from everywhere (nodes
dial it), epmd and the Erlang distribution on this node's overlay address
only (the firewall admits them from the other broker nodes alone), and the
rest on loopback.
`;

async function main(): Promise<void> {
  const args = readArgs();
  if (!args) {
    process.stdout.write(HELP);
    return;
  }
  const { state, hostDir, self, handOver } = args;
  const h = readHandOver(handOver, { first: nodeName(args.join), node: self });
  const o: Options = {
    state,
    home: join(state, 'home'),
    hostDir,
    name: self,
    site: 'default',
    publicHost: h.node.public,
    dialable: '',
    ports: { ...DEFAULT_PORTS, ...h.ports },
    roots: [],
    hostEnv: {},
    brokerAddress: h.node.address,
    brokerName: self,
  };
  const said: string[] = [];
  const step = (what: string, changed: string[]) => {
    console.log(`${what}: ${changed.length ? changed.join(', ') : 'as it was'}`);
    said.push(...changed);
  };
  console.log(`mesh broker node ${self} as ${brokerNode(o)}, joining ${h.first.name} (${h.first.erlNode})`);
  const secrets = await writeBrokerFiles(o, h);
  await raiseBroker(o, h, secrets, step);
  await joinFirst(o, h, step);
  removeHandOver(handOver);
  const now = await clusterStatus(o);
  console.log(
    `the cluster's nodes: ${(now.disk_nodes ?? []).join(', ')}; running: ${(now.running_nodes ?? []).join(', ')}`,
  );
  console.log(
    said.length
      ? `${self} is a broker node: ${said.length} change(s).`
      : `nothing changed: ${self} already is a broker node of ${h.first.name}'s cluster.`,
  );
}

/** The command line, checked, with this machine's node name; null when it asks for help. */
function readArgs(): { join: string; handOver: string; state: string; hostDir: string; self: string } | null {
  const { values: v } = parseArgs({
    args: process.argv.slice(2),
    options: {
      'broker-node': { type: 'boolean' },
      join: { type: 'string' },
      'hand-over': { type: 'string' },
      state: { type: 'string' },
      'host-dir': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (v.help) return null;
  if (!v.join || !v['hand-over'])
    throw refuse(
      'MSH99',
      "--broker-node needs --join FIRST (the first node's name) and --hand-over FILE (what install.sh --add-broker-node wrote there)",
    );
  if (process.getuid?.() !== 0)
    throw refuse('MSH93', "a broker node is installed as root (it writes the broker's unit and key)");
  const state = v.state ?? '/var/lib/mesh';
  const hostDir = v['host-dir'] ?? '/var/lib/mesh-host';
  const self = loadIdentity(hostDir)?.name;
  if (!self)
    throw refuse(
      'MSH94',
      `${hostDir} holds no identity`,
      'this machine must be an enrolled node first (mesh token issue NAME on the first node, then mesh-host enrol here)',
    );
  return { join: v.join, handOver: v['hand-over'], state, hostDir, self };
}

/** The broker's files from the hand-over: cookie, admin password, key and certificate; its address marked clustered. */
async function writeBrokerFiles(o: Options, h: HandOver): Promise<BrokerSecrets> {
  const p = paths(o);
  // The broker's files: its HOME holds the cookie, so it is 0700 as the first node's tls folder.
  mkdirSync(o.state, { recursive: true, mode: 0o755 });
  mkdirSync(p.rabbit, { recursive: true, mode: 0o700 });
  chmodSync(p.rabbit, 0o700);
  mkdirSync(p.tls, { recursive: true, mode: 0o700 });
  const cert = join(p.tls, 'broker.pem');
  const key = join(p.tls, 'broker.key');
  await writeAtomic(p.rabbitCookie, h.cookie, 0o600);
  await writeAtomic(p.rabbitAdmin, h.adminPassword + '\n', 0o600);
  await writeAtomic(key, h.key, 0o600);
  await writeAtomic(cert, h.cert, 0o644);
  await markClustered(o, h.node.address, o.name);
  // A new certificate (the first node's step run again) changes the config, so the broker restarts to serve it.
  return {
    password: h.adminPassword,
    cert,
    key,
    fingerprint: new X509Certificate(h.cert).fingerprint256,
  };
}

/** This machine's broker as a carried service (a systemd unit where it boots with systemd), up and answering. */
async function raiseBroker(
  o: Options,
  h: HandOver,
  secrets: BrokerSecrets,
  step: (what: string, changed: string[]) => void,
): Promise<void> {
  const systemd = hasSystemd();
  // P1: under systemd the broker runs as its own user, as on the first node: root on
  // this machine's broker (or a flaw in RabbitMQ) reads only the broker's own folder.
  if (systemd) {
    o.users = DAEMON_USERS;
    step('users', await ensureUsers(o.users));
  }
  const spec = brokerSpec(o);
  const plan = [...brokerResources(o, secrets), carriedService(spec, systemd)];
  const carried = new Carried(plan, o.hostDir, [o.state, ...(systemd ? [UNIT_DIR] : [])], (l) => console.log(`  ${l}`));
  await carried.load();
  const up = [
    ...(systemd ? await quietDistroListeners() : []),
    ...(await ownBroker(o)),
    ...(await carried.upTo(plan.at(-1)!.id)),
  ];
  if (systemd) up.push(...(await ensureUnits([spec], new Set(carried.changed))));
  await waitForBroker(o, h.adminPassword);
  step('broker', up);
}

/** This broker joined to the first node's cluster, once the first node's firewall lets it reach epmd there. */
async function joinFirst(o: Options, h: HandOver, step: (what: string, changed: string[]) => void): Promise<void> {
  // The first node's firewall admits this node's epmd and distribution once
  // the first node's step declared it (the broker recorded with --node): wait for it.
  const st = await clusterStatus(o);
  if (!(st.disk_nodes ?? []).includes(h.first.erlNode))
    await waitReachable(h.first.address, o.ports.epmd, 300, (l) => console.log(`  ${l}`));
  step('cluster', await joinCluster(o, h.first.erlNode));
}

runMain(main);
