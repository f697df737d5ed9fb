// Where a declared path may live. The declaration is signed, but the roots
// are this host's own limit: a resource naming /etc/shadow or ../../ is
// refused here, before any driver touches the disk.
import { posix } from 'node:path';
import { realpathSync } from 'node:fs';
import { refuse } from '../../src/sys/errors.js';

/**
 * Throw unless `path` is absolute, already normalised (no `.`/`..` segments,
 * no doubled or trailing slash) and under one of `roots`.
 */
export function checkPath(path: string, roots: string[]): void {
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
}

/**
 * checkPath, and the existing part of the path must not leave the roots
 * through a symlink (a lexical check alone would follow /srv/app -> /etc).
 */
export async function checkRealPath(path: string, roots: string[]): Promise<void> {
  checkPath(path, roots);
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
