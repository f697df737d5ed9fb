// What the first node runs, said once (a Spec), raised two ways: where the
// machine boots with systemd, as a unit file the bundle carries
// (/etc/systemd/system/<name>.service: Restart=on-failure, ordered after what
// it needs, hardened, logging to the journal); elsewhere (the lab, a
// container) as a carried `service` that mesh-host supervises itself.
import { existsSync } from 'node:fs';
import type { Resource, ServiceResource } from '../src/wire/resources.js';
import { run, runAny } from '../src/sys/proc.js';
import { file, withEnv } from './carried.js';

export const UNIT_DIR = '/etc/systemd/system';

/** Checked when asked: the lab runs the bundle where /run/systemd is hidden. */
export const hasSystemd = () => existsSync('/run/systemd/system');

export interface Spec {
  /** The unit's name without .service, and the carried service's name. */
  name: string;
  description: string;
  exec: string[];
  env?: Record<string, string>;
  /** Runs as this user (the store: postgres); root otherwise. */
  user?: string;
  /** Units this one starts after and wants (their names without .service). */
  after?: string[];
  /** Carried resource ids whose change must restart it (D4). */
  restartOn?: string[];
  /**
   * service: a daemon that needs no privilege beyond its own files: no new
   * privileges, /usr /boot /etc read-only, no /home, its own /tmp, no
   * capabilities at all. agent: mesh-host, which writes declared files where
   * declarations say (/etc included), raises WireGuard and nftables, runs
   * podman and systemctl: it keeps the capabilities that needs, and may run
   * setuid helpers (podman's newuidmap), so no NoNewPrivileges.
   */
  profile: 'service' | 'agent' | 'oneshot';
  /**
   * Type=notify with this WatchdogSec: the process says ready, then alive from
   * its work loop (src/sys/notify.ts); silent this long, systemd restarts it.
   * NotifyAccess=all: the word comes from systemd-notify, a child in the unit's cgroup.
   */
  watchdogSec?: number;
  /** PostgreSQL's fast shutdown is SIGINT; the others stop on SIGTERM. */
  killSignal?: string;
}

// systemd splits ExecStart and Environment itself: quote every word and
// double % (specifiers, both); in ExecStart double $ too (variables; an
// Environment= value is never expanded, so there a $ stays as it is).
const quoteEnv = (s: string) =>
  `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%').replace(/\n/g, '\\n')}"`;
const quote = (s: string) => quoteEnv(s).replace(/\$/g, '$$$$');

const AGENT_CAPS = [
  'CAP_NET_ADMIN',
  'CAP_NET_RAW',
  'CAP_NET_BIND_SERVICE', // WireGuard, nftables, routes
  'CAP_CHOWN',
  'CAP_FOWNER',
  'CAP_DAC_OVERRIDE',
  'CAP_DAC_READ_SEARCH', // declared files, any owner and mode
  'CAP_KILL',
  'CAP_SETUID',
  'CAP_SETGID',
  'CAP_SETPCAP',
  'CAP_SETFCAP', // services it supervises, podman
  'CAP_SYS_ADMIN',
  'CAP_SYS_CHROOT',
  'CAP_SYS_RESOURCE',
  'CAP_MKNOD',
  'CAP_AUDIT_WRITE', // podman's containers
];

const CARRIED = 'Written by the mesh first-node bundle (carried): a second run leaves it as it is.';

/** The unit file of `s`; `origin` is its first comment (who wrote it, and whether to edit it). */
export function unitText(s: Spec, origin = CARRIED): string {
  const after = s.after ?? [];
  const lines = [`# ${origin}`, '[Unit]', `Description=${s.description}`];
  if (s.profile === 'oneshot') {
    // Before anything on the network is up: the table is there before any service listens.
    lines.push(
      'DefaultDependencies=no',
      'After=local-fs.target',
      'Before=network-pre.target shutdown.target',
      'Wants=network-pre.target',
      'Conflicts=shutdown.target',
    );
  } else {
    const units = ['network-online.target', ...after.map((a) => `${a}.service`)];
    lines.push(`After=${units.join(' ')}`, `Wants=${units.join(' ')}`, 'StartLimitIntervalSec=0');
  }
  lines.push('', '[Service]');
  if (s.profile === 'oneshot') lines.push('Type=oneshot', 'RemainAfterExit=yes');
  else if (s.watchdogSec)
    lines.push(
      'Type=notify',
      'NotifyAccess=all',
      `WatchdogSec=${s.watchdogSec}s`,
      'Restart=on-failure',
      'RestartSec=2s',
    );
  else lines.push('Type=simple', 'Restart=on-failure', 'RestartSec=2s');
  if (s.user) lines.push(`User=${s.user}`);
  for (const [k, v] of Object.entries(s.env ?? {})) lines.push(`Environment=${quoteEnv(`${k}=${v}`)}`);
  lines.push(`ExecStart=${s.exec.map(quote).join(' ')}`, 'WorkingDirectory=/');
  if (s.profile !== 'oneshot') {
    // The agent's main process is mesh-host supervise: it alone is told to stop, and stops the agent it
    // started (told twice at once, the agent would end before its link closed); what is left goes at the end.
    const killMode = s.profile === 'agent' ? 'mixed' : 'control-group';
    lines.push(`KillMode=${killMode}`, `KillSignal=${s.killSignal ?? 'SIGTERM'}`, 'TimeoutStopSec=60');
    lines.push('StandardOutput=journal', 'StandardError=journal', `SyslogIdentifier=${s.name}`);
  }
  lines.push('PrivateTmp=yes');
  if (s.profile === 'agent') {
    lines.push('ProtectHome=read-only', `CapabilityBoundingSet=${AGENT_CAPS.join(' ')}`);
  } else {
    lines.push(
      'NoNewPrivileges=yes',
      'ProtectSystem=full',
      'ProtectHome=yes',
      'ProtectKernelModules=yes',
      'ProtectControlGroups=yes',
      'RestrictSUIDSGID=yes',
    );
    // nft needs CAP_NET_ADMIN to load the table; the daemons need nothing.
    lines.push(`CapabilityBoundingSet=${s.profile === 'oneshot' ? 'CAP_NET_ADMIN' : ''}`);
    if (s.profile === 'service') lines.push('LimitNOFILE=65536');
  }
  lines.push('', '[Install]', 'WantedBy=multi-user.target', '');
  return lines.join('\n');
}

export const unitPath = (name: string) => `${UNIT_DIR}/${name}.service`;

/** The carried resource that raises `s` on this machine: its unit file under systemd, else a supervised service. */
export function carriedService(s: Spec, systemd = hasSystemd()): Resource {
  if (systemd) return file(unitPath(s.name), unitText(s), '0644');
  const argv = s.user ? ['/usr/sbin/runuser', '-u', s.user, '--', ...s.exec] : s.exec;
  const svc: ServiceResource = {
    kind: 'service',
    id: `service:${s.name}`,
    name: s.name,
    exec: s.env ? withEnv(s.env, argv) : argv,
  };
  if (s.restartOn?.length) svc.restartOn = s.restartOn;
  return svc;
}

const systemctl = (args: string[]) => run('systemctl', args);

/**
 * Under systemd, after the unit files are in place: reload when one changed,
 * enable each, restart one whose unit or restartOn files changed (D4), start
 * one that is not running. Nothing at all when everything is as it was.
 * Returns what it did.
 */
export async function ensureUnits(specs: Spec[], changed: ReadonlySet<string>): Promise<string[]> {
  const did: string[] = [];
  const unitChanged = (s: Spec) => changed.has(`file:${unitPath(s.name)}`);
  if (specs.some(unitChanged)) await systemctl(['daemon-reload']);
  for (const s of specs) {
    const unit = `${s.name}.service`;
    if ((await runAny('systemctl', ['is-enabled', '--quiet', unit])).code !== 0) {
      await systemctl(['enable', '--quiet', unit]);
      did.push(`enabled ${unit}`);
    }
    const active = (await runAny('systemctl', ['is-active', '--quiet', unit])).code === 0;
    if (active && (unitChanged(s) || s.restartOn?.some((id) => changed.has(id)))) {
      await systemctl(['restart', unit]);
      did.push(`restarted ${unit}`);
    } else if (!active) {
      await systemctl(['start', unit]);
      did.push(`started ${unit}`);
    }
  }
  return did;
}

// Debian's rabbitmq-server package starts its own broker at boot (5672,
// 25672 and epmd's 4369, on every address): not the mesh's, and X1 allows no
// listener off loopback but TLS. The first node runs its own broker, so the
// distribution's is stopped and disabled. (PostgreSQL's own cluster listens on
// localhost only and is left to the operator.)
const DISTRO_LISTENERS = ['rabbitmq-server.service', 'epmd.socket', 'epmd.service'];

/** Under systemd: stop and disable the distribution's own broker and epmd where they run or would run at boot. */
export async function quietDistroListeners(): Promise<string[]> {
  const did: string[] = [];
  for (const unit of DISTRO_LISTENERS) {
    // "static" and "masked" units are not enabled: only "enabled" starts at boot by itself.
    const enabled = (await runAny('systemctl', ['is-enabled', unit])).stdout.trim() === 'enabled';
    const active = (await runAny('systemctl', ['is-active', '--quiet', unit])).code === 0;
    if (!enabled && !active) continue;
    await systemctl(['disable', '--now', '--quiet', unit]);
    did.push(`stopped and disabled the distribution's ${unit}`);
  }
  return did;
}
