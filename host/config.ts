// The host's settings: every MESH_* variable mesh-host reads, read here once
// when a command starts and handed down, each checked with the refusal that
// names it. No other host file reads the environment.
//   MESH_HOST_DIR                 identity, keys and applied state (/var/lib/mesh-host)
//   MESH_HOST_PIDFILE             where a dispatcher hook finds this process (MESH_HOST_DIR/mesh-host.pid)
//   MESH_HOST_ROOTS               colon-separated directories a declared path may live under
//   MESH_HOST_ENROL_SECONDS       how long `mesh-host enrol` may take in all (60)
//   MESH_HOST_HEARD_SECONDS       R3's period (60)
//   MESH_HOST_RECONCILE_SECONDS   D6's period (300)
//   MESH_HOST_BACKOFF_{MIN,MAX,RESET}_SECONDS   L1's backoff (2, 120, 30)
//   MESH_HOST_FIREWALL=off        hold the firewall without loading it: a host that shares its network
//                                 namespace with things that must not be closed (the test suites' hosts)
//   MESH_WG_DIR                   where wg-quick files live (/etc/wireguard); the lab points it elsewhere
//   MESH_HOST_DPKG_ROOT           the root whose dpkg status the host reports and whose packages apt installs (/);
//                                 the lab's nodes, which share one machine, each point at their own
import { join } from 'node:path';
import { refuse } from '../src/sys/errors.js';
import { backoffFromEnv, type BackoffSettings } from '../src/sys/backoff.js';

export interface HostConfig {
  dir: string;
  pidFile: string;
  roots: string[];
  enrolSeconds: number;
  heardSeconds: number;
  reconcileSeconds: number;
  backoff: BackoffSettings;
  /** False when MESH_HOST_FIREWALL=off: the firewall is held, not loaded. */
  firewall: boolean;
  wgDir: string;
  /** The root of the dpkg database reported and installed into (MESH_HOST_DPKG_ROOT). */
  dpkgRoot: string;
}

export const DEFAULT_ROOTS = ['/etc', '/srv', '/opt', '/var/lib', '/usr/local'];

/** Every setting, from ENV (the process's environment unless a test hands its own). */
export function hostConfig(env: NodeJS.ProcessEnv = process.env): HostConfig {
  const dir = stateDir(env);
  return {
    dir,
    pidFile: env.MESH_HOST_PIDFILE || join(dir, 'mesh-host.pid'),
    roots: env.MESH_HOST_ROOTS ? env.MESH_HOST_ROOTS.split(':').filter(Boolean) : DEFAULT_ROOTS,
    enrolSeconds: seconds(env, 'MESH_HOST_ENROL_SECONDS', 60),
    heardSeconds: seconds(env, 'MESH_HOST_HEARD_SECONDS', 60),
    reconcileSeconds: reconcileSeconds(env),
    backoff: backoffFromEnv(env),
    firewall: env.MESH_HOST_FIREWALL !== 'off',
    wgDir: env.MESH_WG_DIR ?? '/etc/wireguard',
    dpkgRoot: dpkgRoot(env),
  };
}

function dpkgRoot(env: NodeJS.ProcessEnv): string {
  const v = env.MESH_HOST_DPKG_ROOT || '/';
  if (!v.startsWith('/'))
    throw refuse('MSHO2', `MESH_HOST_DPKG_ROOT must be an absolute directory, not ${JSON.stringify(v)}`);
  return v;
}

export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MESH_HOST_DIR || '/var/lib/mesh-host';
}

function seconds(env: NodeJS.ProcessEnv, name: string, dflt: number): number {
  const v = Number(env[name] ?? dflt);
  if (!Number.isFinite(v) || v <= 0) throw refuse('MSHG4', `${name} must be a positive number of seconds`);
  return v;
}

export const heardSeconds = (env: NodeJS.ProcessEnv) => seconds(env, 'MESH_HOST_HEARD_SECONDS', 60);

/** D6's period: 300 unset; anything but a positive number is refused (a NaN interval would reconcile without pause). */
export function reconcileSeconds(env: NodeJS.ProcessEnv): number {
  const v = env.MESH_HOST_RECONCILE_SECONDS;
  const every = Number(v ?? 300);
  if (!Number.isFinite(every) || every <= 0)
    throw refuse('MSHG4', `MESH_HOST_RECONCILE_SECONDS must be a positive number of seconds, not ${JSON.stringify(v)}`);
  return every;
}

/** What the drivers read of the settings: where wg-quick files live, whether the firewall is loaded, and the dpkg root. */
export const driverSettings = (c: HostConfig): { wgDir: string; firewall: boolean; dpkgRoot: string } => ({
  wgDir: c.wgDir,
  firewall: c.firewall,
  dpkgRoot: c.dpkgRoot,
});
