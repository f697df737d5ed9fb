// Where a declared path may live. The declaration is signed, but the roots
// are this host's own limit: a resource naming ../../, a path outside the
// roots, or one of the files below (inside the roots or not) is refused here,
// before any driver touches the disk or mounts it into a container.
//
// Never writable: what would let a declaration rewrite the host that judges
// declarations (its identity, keys and serial mark in its own directory; a
// unit or drop-in of mesh's own services), the control plane's home and state
// on a first node (the signing key, the store), and the machine's accounts
// and who may become root.
import { posix } from 'node:path';
import { realpathSync } from 'node:fs';
import { refuse } from '../../src/sys/errors.js';

export const NEVER_WRITABLE = [
  '/var/lib/mesh',
  '/etc/shadow',
  '/etc/gshadow',
  '/etc/passwd',
  '/etc/group',
  '/etc/sudoers',
  '/etc/sudoers.d',
];
// A unit file or drop-in directory of mesh's own, in any unit directory.
const MESH_UNIT = /\/systemd\/(system|user)\/mesh-[^/]*(\/|$)/;
// The control plane's home keeps its own files (signing key, broker and
// store settings) at its top; its subdirectories hold declared files.
const HOME_FILE = /^\/etc\/mesh\/[^/]+$/;

/** Where a path may be declared: the roots, less the host's own directory and NEVER_WRITABLE. */
export interface Where {
  roots: string[];
  stateDir: string;
  /** The bundle's own plan: mesh's units and files are what it raises. */
  carried?: boolean;
}

/** Why `path` is never writable, or null. */
function ownFile(path: string, stateDir: string): string | null {
  if (isUnder(path, stateDir)) return `it is in this host's own directory ${stateDir} (its identity, keys and serial)`;
  const hit = NEVER_WRITABLE.find((p) => isUnder(path, p));
  if (hit) return `it is ${hit}, which no declaration may write`;
  if (MESH_UNIT.test(path)) return "it is a unit or drop-in of mesh's own services";
  if (HOME_FILE.test(path)) return "it is one of the control plane's own files in /etc/mesh";
  return null;
}

/**
 * Throw unless `path` is absolute, already normalised (no `.`/`..` segments,
 * no doubled or trailing slash), under one of the roots and none of the
 * host's own files.
 */
export function checkPath(path: string, where: Where): void {
  const { roots } = where;
  const allowed = roots.join(', ') || '(none configured)';
  if (
    typeof path !== 'string' ||
    !posix.isAbsolute(path) ||
    posix.normalize(path) !== path ||
    path.endsWith('/') ||
    path.split('/').includes('..') ||
    path.includes('\0')
  ) {
    throw refuse(
      'MSH85',
      `Path ${JSON.stringify(path)} is refused`,
      `it must be absolute and normalised (no "..") and under one of ${allowed}. Fix the declaration`,
    );
  }
  if (!roots.some((root) => isUnder(path, root))) {
    throw refuse(
      'MSH86',
      `Path ${path} is refused`,
      `it is not under any allowed root (${allowed}). Declare it under an allowed root or add the root to this host's configuration`,
    );
  }
  const own = where.carried ? null : ownFile(path, where.stateDir);
  if (own) throw refuse('MSHX0', `Path ${path} is refused`, `${own}. Declare the file elsewhere`);
}

/**
 * checkPath, and the existing part of the path must not leave the roots
 * through a symlink (a lexical check alone would follow /srv/app -> /etc).
 */
export async function checkRealPath(path: string, where: Where): Promise<void> {
  checkPath(path, where);
  const { roots } = where;
  // Synchronous: a lookup in the kernel's cache of names, where each asynchronous
  // call would be a round trip to libuv's thread pool.
  const real = realpathOfExisting(posix.dirname(path));
  const realRoots = roots.map((r) => {
    try {
      return realpathSync.native(r);
    } catch {
      return r;
    }
  });
  if (!realRoots.some((root) => isUnder(real, root))) {
    throw refuse(
      'MSH87',
      `Path ${path} is refused`,
      `its directory resolves to ${real}, outside the allowed roots (${roots.join(', ')}). Remove the symlink or fix the declaration`,
    );
  }
  const own = where.carried ? null : ownFile(real, where.stateDir);
  if (own)
    throw refuse(
      'MSHX0',
      `Path ${path} is refused`,
      `its directory resolves to ${real}: ${own}. Remove the symlink or fix the declaration`,
    );
}

function isUnder(path: string, root: string): boolean {
  const r = root.endsWith('/') && root !== '/' ? root.slice(0, -1) : root;
  return path === r || path.startsWith(r === '/' ? '/' : r + '/');
}

function realpathOfExisting(path: string): string {
  try {
    return realpathSync.native(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || path === '/') throw err;
    return posix.join(realpathOfExisting(posix.dirname(path)), posix.basename(path));
  }
}
