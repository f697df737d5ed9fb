// The root tree of a booted lab machine: a Debian 12 made by mmdebstrap with
// systemd as PID 1 and the packages a first node carries already in it (the
// lab's machines have no way to the Debian mirror, and apt is not what is
// being tested). Made once into a gitignored cache; every later run copies it.
// The name carries a digest of the package list, so a changed list makes a
// new tree rather than reuse a stale one.
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { runAny } from '../../src/sys/proc.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const CACHE = process.env.MESH_LAB_ROOTFS_CACHE || join(REPO, '.lab/rootfs-cache');

/** systemd, an sshd (an operator's way in, which the firewall must keep open), what bundle/ensure-packages.sh `first` wants, and ping for the overlay check. */
export const PACKAGES = [
  'systemd',
  'systemd-sysv',
  'dbus',
  'iproute2',
  'procps',
  'openssl',
  'iputils-ping',
  'ca-certificates',
  'openssh-server',
  'postgresql',
  'rabbitmq-server',
  'wireguard-go',
  'wireguard-tools',
  'nftables',
  'iptables',
  'podman',
  'runc',
];

export function treeName(): string {
  return `bookworm-${createHash('sha256').update(PACKAGES.join(' ')).digest('hex').slice(0, 10)}`;
}

/** The cached tree, made now if absent (minutes, once). Returns its path. */
export async function ensureRootfs(say: (l: string) => void = () => {}): Promise<string> {
  const tree = join(CACHE, treeName());
  if (existsSync(join(tree, 'usr/lib/systemd/systemd'))) return tree;
  mkdirSync(CACHE, { recursive: true, mode: 0o755 });
  const tmp = `${tree}.making`;
  rmSync(tmp, { recursive: true, force: true });
  say(`making the booted machine's root tree in ${tree} (once; later runs reuse it)`);
  const r = await runAny('mmdebstrap', [
    '--variant=apt',
    '--aptopt=APT::Install-Recommends "false"',
    `--include=${PACKAGES.join(',')}`,
    '--customize-hook=chroot "$1" systemctl mask systemd-networkd-wait-online.service',
    'bookworm',
    tmp,
  ]);
  if (r.code !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(
      `mmdebstrap failed (${r.code}): ${(r.stderr || r.stdout).trim().split('\n').slice(-5).join(' | ')}. Is it installed (bundle/ensure-packages.sh lab) and is Debian's mirror reachable?`,
    );
  }
  renameSync(tmp, tree);
  return tree;
}
