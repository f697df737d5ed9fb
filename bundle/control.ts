// The control plane on the first node: its home (broker.json, signing key),
// `mesh serve` as a carried service, and then the machine enrolled against
// its own mesh like any other node -- a token issued, spent by mesh-host, the
// host running -- so its specialness lasts exactly as long as the install.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Resource } from '../src/wire/resources.js';
import type { BrokerConfig } from '../src/home/home.js';
import { ensureSigner } from '../src/home/home.js';
import { issueToken } from '../src/inventory/token.js';
import { declare } from '../src/assignment/declare.js';
import { loadIdentity } from '../host/identity.js';
import { enrol } from '../host/enrol.js';
import { readToken, writeToken } from '../src/wire/token.js';
import { file, service, withEnv } from './carried.js';
import { ADMIN, VHOST, type BrokerSecrets } from './rabbitmq.js';
import { paths, controlEnv, hostEnv, MESH_JS, MESH_HOST_JS, type Options } from './layout.js';

export function brokerConfig(o: Options, s: BrokerSecrets): BrokerConfig {
  return {
    amqp: { host: '127.0.0.1', port: o.ports.amqp },
    vhost: VHOST,
    user: ADMIN,
    password: s.password,
    management: `http://127.0.0.1:${o.ports.mgmt}`,
    public: `${o.publicHost}:${o.ports.amqps}`,
    fingerprint: s.fingerprint,
  };
}

/** broker.json as a carried file (the text writeBroker writes), so `serve` restarts when it changes (D4). */
export function controlResources(o: Options, s: BrokerSecrets): Resource[] {
  const p = paths(o);
  return [
    file(p.brokerJson, JSON.stringify(brokerConfig(o, s), null, 2), '0600'),
    service('mesh-serve', withEnv(controlEnv(o), [process.execPath, MESH_JS, 'serve']), [`file:${p.brokerJson}`]),
  ];
}

export function hostResources(o: Options): Resource[] {
  return [service('mesh-host', withEnv(hostEnv(o), [process.execPath, MESH_HOST_JS, 'run']))];
}

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** `mesh` and `mesh-host` for the operator of this machine: the same paths the services get, no secret. */
export function wrapperResources(o: Options): Resource[] {
  const p = paths(o);
  const script = (env: Record<string, string>, js: string) => [
    '#!/bin/sh',
    '# Written by the first-node bundle: runs with this first node\'s store and home (paths only).',
    ...Object.entries(env).map(([k, v]) => `export ${k}=${shq(v)}`),
    `exec ${shq(process.execPath)} ${shq(js)} "$@"`,
    '',
  ].join('\n');
  return [
    file(join(p.bin, 'mesh'), script(controlEnv(o), MESH_JS), '0755'),
    file(join(p.bin, 'mesh-host'), script(hostEnv(o), MESH_HOST_JS), '0755'),
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
  const t = readToken(issued.command.split(' ').at(-1)!);
  const r = await enrol(writeToken({ ...t, broker: `127.0.0.1:${o.ports.amqps}` }), o.hostDir);
  return r.name;
}

/** Owe this node its declaration if its composition changed (nothing on a second run); mesh serve delivers it. */
export async function declareSelf(o: Options): Promise<number | null> {
  useControlEnv(o);
  const name = loadIdentity(o.hostDir)?.name ?? o.name;
  const out = await declare({ nodes: [name], changedOnly: true });
  const sent = out.find((d) => d.node === name);
  return sent ? sent.serial : null;
}

// The control-plane functions read MESH_HOME and MESH_STORE_* from the
// environment; these are paths, never secrets.
function useControlEnv(o: Options): void {
  Object.assign(process.env, controlEnv(o));
}

export function readAdminPassword(o: Options): string {
  return readFileSync(paths(o).rabbitAdmin, 'utf8').trim();
}
