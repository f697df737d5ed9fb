// The package resource: a Debian package installed at a version or above,
// with apt from the sources the machine already has. A machine at the version
// or above holds it (a later upgrade is never undone); below, or without it,
// `apt-get install NAME=VERSION` puts it there, and when apt does not know
// that version yet its lists are brought up to date once and it is asked
// again. Removing the resource uninstalls nothing.
//
// A host given another dpkg root (MESH_HOST_DPKG_ROOT: the lab's nodes, which
// share one machine) reads and installs into that root alone: apt's state,
// sources and cache under it, dpkg with --root. The machine's own packages
// are never touched from there.
import { createHash } from 'node:crypto';
import type { PackageResource } from '../../src/wire/resources.js';
import type { Driver } from './driver.js';
import { runAny, exitError } from '../../src/sys/proc.js';
import { readInstalled, statusPath } from '../packages.js';

/** apt-get's options for ROOT: none for the machine's own. */
export function aptOptions(root: string): string[] {
  if (root === '/') return [];
  const o = (v: string) => ['-o', v];
  return [
    ...o(`Dir=${root}`),
    ...o(`Dir::State::status=${statusPath(root)}`),
    ...o(`DPkg::Options::=--root=${root}`),
    // Maintainer scripts run without a chroot into ROOT: a package root holds no shell to run them in.
    ...o('DPkg::Options::=--force-script-chrootless'),
    // apt's downloads run as _apt, which may not read a root the host made 0700.
    ...o('APT::Sandbox::User=root'),
  ];
}

const APT_ENV = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
// A configuration file changed on the machine is kept, never asked about: nobody answers.
const KEEP_CONFIG = ['-o', 'Dpkg::Options::=--force-confdef', '-o', 'Dpkg::Options::=--force-confold'];

async function installed(r: PackageResource, root: string): Promise<string | undefined> {
  return (readInstalled(statusPath(root)) ?? []).find((p) => p[0] === r.name)?.[2];
}

/** dpkg --compare-versions A ge B: the order every Debian tool uses. */
async function atLeast(a: string, b: string): Promise<boolean> {
  return (await runAny('dpkg', ['--compare-versions', a, 'ge', b], { timeoutMs: 10_000 })).code === 0;
}

export const packageDriver: Driver<PackageResource> = {
  kind: 'package',
  target: (r) => r.name,
  digest: (r) => createHash('sha256').update(`${r.name}=${r.version}`).digest('hex'),

  async observe(r, ctx) {
    const have = await installed(r, ctx.dpkgRoot ?? '/');
    if (have === undefined) return 'absent';
    return (await atLeast(have, r.version)) ? 'ok' : 'drift';
  },

  async apply(r, ctx) {
    const root = ctx.dpkgRoot ?? '/';
    const have = await installed(r, root);
    if (have !== undefined && (await atLeast(have, r.version))) return false;
    const opts = aptOptions(root);
    const install = [
      '-q',
      ...opts,
      ...KEEP_CONFIG,
      'install',
      '-y',
      '--no-install-recommends',
      `${r.name}=${r.version}`,
    ];
    let ran = await runAny('apt-get', install, { env: APT_ENV, timeoutMs: 15 * 60_000 });
    if (ran.code !== 0 && /(Version '.*' for '.*' was not found|Unable to locate package)/.test(ran.stderr)) {
      ctx.log(`package: apt does not know ${r.name} ${r.version} yet: updating its lists from this machine's sources`);
      const update = await runAny('apt-get', ['-q', ...opts, 'update'], { env: APT_ENV, timeoutMs: 15 * 60_000 });
      if (update.code !== 0) throw exitError('apt-get', ['update'], update);
      ran = await runAny('apt-get', install, { env: APT_ENV, timeoutMs: 15 * 60_000 });
    }
    if (ran.code !== 0) throw exitError('apt-get', install.slice(-1), ran);
    ctx.log(`package: ${r.name} ${have ?? '(none)'} -> ${r.version}`);
    return true;
  },

  // A fixed package stays: the declaration that brought it going away is no reason to take it back.
  async remove() {},
};
