// The control plane on the first node: its home (broker.json, signing key),
// `mesh serve` as a carried service, and then the machine enrolled against
// its own mesh like any other node -- a token issued, spent by mesh-host, the
// host running -- so its specialness lasts exactly as long as the install.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Resource } from '../src/wire/resources.js';
import type { BrokerConfig } from '../src/home/home.js';
import { ensureSigner } from '../src/home/home.js';
import { issueToken } from '../src/inventory/token.js';
import { redeclare } from '../src/provision/redeclare.js';
import { joinHostPort } from '../src/wire/names.js';
import { loadIdentity } from '../host/identity.js';
import { enrol } from '../host/enrol.js';
import { readToken, writeToken } from '../src/wire/token.js';
import { parseModuleEntries } from '../src/wire/parse_resources.js';
import { connect } from '../src/store/connect.js';
import { assign } from '../src/assignment/assign.js';
import { file } from './carried.js';
import type { Spec } from './units.js';
import { ADMIN, VHOST, type BrokerSecrets } from './rabbitmq.js';
import { paths, controlEnv, serveEnv, consoleEnv, hostEnv, MESH_JS, MESH_HOST_JS, type Options } from './layout.js';
import { DEFAULT_METRICS_LISTEN } from '../src/serve/metrics_listen.js';

export function brokerConfig(o: Options, s: BrokerSecrets): BrokerConfig {
  return {
    amqp: { host: '127.0.0.1', port: o.ports.amqp },
    vhost: VHOST,
    user: ADMIN,
    password: s.password,
    management: `http://127.0.0.1:${o.ports.mgmt}`,
    public: joinHostPort(o.publicHost, o.ports.amqps),
    fingerprint: s.fingerprint,
    // A node of a cluster: serve makes node queues quorum (and moves the classic
    // ones at its restart, which this file's change causes), though it dials
    // only its own node over loopback.
    ...(o.brokerAddress ? { cluster: true } : {}),
  };
}

/** broker.json as a carried file (the text writeBroker writes), so `serve` restarts when it changes (D4); serve's user's alone (P1). */
export function controlResources(o: Options, s: BrokerSecrets): Resource[] {
  return [file(paths(o).brokerJson, JSON.stringify(brokerConfig(o, s), null, 2), '0600', o.users?.serve)];
}

export function serveSpec(o: Options): Spec {
  return {
    name: 'mesh-serve',
    description: 'mesh control plane (mesh serve)',
    profile: 'service',
    // Its drain loop goes round every sweep (5 s): two minutes silent is a loop that is stuck.
    watchdogSec: 120,
    after: ['mesh-postgres', 'mesh-rabbitmq'],
    // P1: its own user, the one that reads the signing key; the URLs of its contexts alone.
    ...(o.users ? { user: o.users.serve } : {}),
    env: serveEnv(o),
    // Said here rather than left to the default, so the unit itself shows where metrics listen: loopback,
    // which the first node's table does not open (an operator's Prometheus elsewhere comes over the overlay).
    exec: [process.execPath, MESH_JS, 'serve', '--metrics', DEFAULT_METRICS_LISTEN],
    restartOn: [`file:${paths(o).brokerJson}`],
  };
}

/** mesh console, read-only, where --console said (loopback unless the operator named another address). */
export function consoleSpec(o: Options, listen: string): Spec {
  return {
    name: 'mesh-console',
    description: 'mesh web console (mesh console, read-only)',
    profile: 'service',
    after: ['mesh-postgres'],
    // P1: network-facing, so its own user: no signing key, no broker, no other context's URL.
    ...(o.users ? { user: o.users.console } : {}),
    env: consoleEnv(o),
    exec: [process.execPath, MESH_JS, 'console', '--listen', listen],
  };
}

export function hostSpec(o: Options): Spec {
  return agentSpec(hostEnv(o), [process.execPath, MESH_HOST_JS], ['mesh-nftables']);
}

/**
 * The agent as a unit, said once for the first node (after its firewall
 * unit, with the runtime the install runs with) and for the mesh-host package
 * (bundle/deb: the package's runtime, on any machine). It runs `mesh-host
 * supervise`, the one path that starts the agent from the package root's
 * current version and runs the guard before each start (V2), so an upgrade the
 * mesh declared that does not report is taken back here as on any other node.
 */
export function agentSpec(env: Record<string, string>, exec: string[], after: string[] = []): Spec {
  return {
    name: 'mesh-host',
    description: 'mesh host agent (mesh-host supervise)',
    profile: 'agent',
    // An apply may pull an image for minutes; ten minutes with no turn of the apply loop is one that is stuck.
    watchdogSec: 600,
    after,
    env,
    exec: [...exec, 'supervise'],
  };
}

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A command for the operator: NODE running JS with ENV (paths only, never a secret); the first node's and the packages'. */
export function wrapperScript(
  env: Record<string, string>,
  js: string,
  node = process.execPath,
  why = FIRST_NODE_WRAPPER,
): string {
  return [
    '#!/bin/sh',
    `# ${why}`,
    ...Object.entries(env).map(([k, v]) => `export ${k}=${shq(v)}`),
    `exec ${shq(node)} ${shq(js)} "$@"`,
    '',
  ].join('\n');
}

const FIRST_NODE_WRAPPER = "Written by the first-node bundle: runs with this first node's store and home (paths only).";

/** `mesh` and `mesh-host` for the operator of this machine: the same paths the services get, no secret. */
export function wrapperResources(o: Options): Resource[] {
  const p = paths(o);
  return [
    file(join(p.bin, 'mesh'), wrapperScript(controlEnv(o), MESH_JS), '0755'),
    file(join(p.bin, 'mesh-host'), wrapperScript(hostEnv(o), MESH_HOST_JS), '0755'),
  ];
}

/** The signing key, made once and never replaced. True when made now. */
export async function ensureSigningKey(o: Options): Promise<{ made: boolean; mesh: string }> {
  const had = !!statSync(join(o.home, 'signing.key'), { throwIfNoEntry: false });
  const s = await ensureSigner({ MESH_HOME: o.home });
  return { made: !had, mesh: s.mesh };
}

/** Enrol this machine against its own mesh, unless it already is. Returns its name when enrolled now. */
export async function enrolSelf(o: Options): Promise<string | null> {
  const id = loadIdentity(o.hostDir);
  if (id) {
    if (id.name !== o.name) console.log(`  this machine is enrolled as ${id.name}, not ${o.name}; keeping ${id.name}`);
    return null;
  }
  useControlEnv(o);
  const issued = await issueToken(o.name, { site: o.site, dialable: o.dialable, ttl: '15m' });
  // The token goes from one function to the other in memory: never argv, never
  // a file. This machine dials its own broker on loopback (still TLS, still
  // pinned): its public address may be a router's, which it cannot reach from
  // inside when the router does no NAT loopback.
  const t = readToken(issued.token);
  const r = await enrol(writeToken({ ...t, broker: `127.0.0.1:${o.ports.amqps}` }), o.hostDir);
  return r.name;
}

/** The module that says the first node serves the broker: its one opening is TLS from anywhere (X1, X2). */
export const BROKER_MODULE = 'mesh-broker';

/**
 * What the first node's declared firewall must keep open beyond the base:
 * the broker's TLS port, as a shipped module assigned to this node, and the
 * ssh port the operator named. Without them the mesh's own firewall would
 * close the broker (and, on another ssh port, the operator) out. Returns what changed.
 */
export async function ensureFirstNodeOpenings(o: Options, node: string): Promise<string[]> {
  useControlEnv(o);
  const changed: string[] = [];
  const entries = parseModuleEntries([
    {
      kind: 'opening',
      id: 'opening:broker',
      name: 'broker',
      proto: 'tcp',
      port: o.ports.amqps,
      from: 'any',
      why: 'broker, TLS',
    },
  ]);
  const cat = await connect('catalogue', { max: 1 });
  try {
    const [had] = await cat`select version from catalogue.module_resources where name = ${BROKER_MODULE}`;
    const [row] =
      await cat`select * from catalogue.put_module(${BROKER_MODULE}, ${cat.json(entries as never)}, 'shipped')`;
    if (!had || had.version !== row!.version)
      changed.push(`module ${BROKER_MODULE} (TLS ${o.ports.amqps} from anywhere)`);
  } finally {
    await cat.end();
  }
  if ((await assign(BROKER_MODULE, node, true)).changed) changed.push(`${BROKER_MODULE} assigned to ${node}`);
  const ov = await connect('overlay', { max: 1 });
  try {
    const [s] = await ov`select ssh_port from overlay.firewall_setting`;
    if (s!.ssh_port !== o.ports.ssh) {
      await ov`select overlay.set_ssh_port(${o.ports.ssh}::int)`;
      changed.push(`ssh port ${o.ports.ssh}`);
    }
  } finally {
    await ov.end();
  }
  return changed;
}

/** W2's one step: this node (and any other whose composition changed) owed its declaration (nothing on a second run); mesh serve delivers it. */
export async function declareSelf(o: Options): Promise<number | null> {
  useControlEnv(o);
  const name = loadIdentity(o.hostDir)?.name ?? o.name;
  const { redeclared } = await redeclare();
  const sent = redeclared.find((d) => d.node === name);
  return sent ? sent.serial : null;
}

// The control-plane functions read MESH_HOME and MESH_STORE_* from the
// environment; these are paths, never secrets.
function useControlEnv(o: Options): void {
  Object.assign(process.env, controlEnv(o));
}
