// The one way a file is written on a node: a reader (or a crash) sees the old
// bytes or the new ones, never a half-written file, and never a moment where
// a key is readable by anyone but its owner.
//
// Only the fsyncs go to libuv's thread pool: they wait on the disk, and the
// event loop must not. The other steps (open, chmod, write into the page
// cache, close, rename) are microseconds in the kernel, and as asynchronous
// calls each was a thread-pool round trip: nine a file, most of what a host
// spent writing a declaration (bench 4's host floor).
import { openSync, fchownSync, fchmodSync, writeSync, fsync, closeSync, renameSync, unlinkSync } from 'node:fs';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

const fsyncFd = promisify(fsync);

export interface Owner {
  uid: number;
  gid: number;
}

/**
 * Write `bytes` to `path` atomically: a temp file in the same directory (so the
 * rename cannot cross a filesystem), created with `mode` and owned by `owner`
 * before a byte is written, fsynced, renamed over `path`, then the directory
 * fsynced so the rename itself survives a power cut.
 */
export async function writeAtomic(
  path: string,
  bytes: Uint8Array | string,
  mode: number,
  owner?: Owner,
): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  // 'wx': never follow or reuse something already at the temp name.
  const fd = openSync(tmp, 'wx', mode & 0o600);
  try {
    // open() applies the umask, which only narrows; chmod/chown now, while the
    // file is still empty, so the final mode is exact and nothing secret is
    // ever readable under a wider mode or the wrong owner.
    if (owner) fchownSync(fd, owner.uid, owner.gid);
    fchmodSync(fd, mode);
    const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off);
    await fsyncFd(fd);
  } catch (err) {
    try { closeSync(fd); } catch { /* the error below says what went wrong */ }
    try { unlinkSync(tmp); } catch { /* nothing left to remove */ }
    throw new Error(`Could not write ${path}: ${(err as Error).message}. Check free space and permissions on ${dir}.`, { cause: err });
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    try { unlinkSync(tmp); } catch { /* nothing left to remove */ }
    throw new Error(`Could not put ${path} in place: ${(err as Error).message}. Remove whatever is at ${path} if it is not a file.`, { cause: err });
  }
  await syncDir(dir);
}

/** fsync a directory so a rename or unlink in it is durable. */
export async function syncDir(dir: string): Promise<void> {
  const fd = openSync(dir, 'r');
  try {
    await fsyncFd(fd);
  } finally {
    closeSync(fd);
  }
}
