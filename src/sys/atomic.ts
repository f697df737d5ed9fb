// The one way a file is written on a node: a reader (or a crash) sees the old
// bytes or the new ones, never a half-written file, and never a moment where
// a key is readable by anyone but its owner.
//
// Every step is a direct call on the calling thread, the fsyncs too. Each
// step's trip through libuv's thread pool (a thread woken each way) cost more
// CPU than the step itself (bench 4's host cost), and no program that writes
// here has anything more urgent to do while its write waits on the disk: a host
// applies one declaration at a time, and its watchdog is fed from that same
// loop. The functions still return promises, so a failure reaches a caller as
// a rejection, as it always has.
import { closeSync, fchmodSync, fchownSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

export interface Owner {
  uid: number;
  gid: number;
}

export interface AtomicWrite {
  path: string;
  bytes: Uint8Array | string;
  mode: number;
  owner?: Owner;
}

/**
 * How much of a write must survive a power cut once the call returns.
 * 'durable': the new bytes at the path (temp fsynced before its rename, the
 * directory fsynced after it). 'whole': the old bytes or the new ones, never a
 * torn file, but the rename itself may be lost (temp fsynced, no directory
 * fsync): for a record whose older version is also safe to find. 'redone':
 * nothing is forced to disk; only for bytes a durable record already holds and
 * the next start writes again when it finds them missing or torn (the host
 * journal, docs/design.md D7).
 */
export type Durability = 'durable' | 'whole' | 'redone';

/** Every step that changes the disk, in order, for a test that cuts the power between any two of them. */
export type DiskStep =
  | { op: 'write'; tmp: string; path: string; bytes: Buffer; mode: number }
  | { op: 'fsync'; tmp: string }
  | { op: 'rename'; tmp: string; path: string }
  | { op: 'fsyncdir'; dir: string }
  | { op: 'unlink'; path: string };

/** A test setting: when set, told of every step above before it is taken. Unset in every program. */
export const diskSteps: { note?: (s: DiskStep) => void } = {};

/** Write `bytes` to `path` atomically (see writeAtomicAll). */
export function writeAtomic(
  path: string,
  bytes: Uint8Array | string,
  mode: number,
  owner?: Owner,
  durability: Durability = 'durable',
): Promise<void> {
  return writeAtomicAll([{ path, bytes, mode, owner }], durability);
}

/**
 * Write several files atomically, as one batch: each to a temp file in its own
 * directory (so the rename cannot cross a filesystem), created with its mode
 * and owner before a byte is written, and fsynced; only when every temp is on
 * disk is each renamed over its path, in the order given; then each directory
 * is fsynced once, so the renames survive a power cut. One fsync a file and one
 * a directory, however many files share it.
 */
export async function writeAtomicAll(writes: AtomicWrite[], durability: Durability = 'durable'): Promise<void> {
  const temps: string[] = [];
  try {
    for (const w of writes) temps.push(writeTemp(w, durability !== 'redone'));
  } catch (err) {
    temps.forEach(unlinkQuietly);
    throw err;
  }
  for (const [i, w] of writes.entries()) {
    try {
      diskSteps.note?.({ op: 'rename', tmp: temps[i]!, path: w.path });
      renameSync(temps[i]!, w.path);
    } catch (err) {
      temps.slice(i).forEach(unlinkQuietly);
      throw new Error(
        `Could not put ${w.path} in place: ${(err as Error).message}. Remove whatever is at ${w.path} if it is not a file.`,
        { cause: err },
      );
    }
  }
  if (durability === 'durable') for (const dir of new Set(writes.map((w) => dirname(w.path)))) fsyncDir(dir);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* already gone */
  }
}

function writeTemp(w: AtomicWrite, sync: boolean): string {
  const dir = dirname(w.path);
  const tmp = join(dir, `.${basename(w.path)}.${randomBytes(6).toString('hex')}.tmp`);
  // 'wx': never follow or reuse something already at the temp name.
  const fd = openSync(tmp, 'wx', w.mode & 0o600);
  try {
    // open() applies the umask, which only narrows; chmod/chown now, while the
    // file is still empty, so the final mode is exact and nothing secret is
    // ever readable under a wider mode or the wrong owner.
    if (w.owner) fchownSync(fd, w.owner.uid, w.owner.gid);
    fchmodSync(fd, w.mode);
    diskSteps.note?.({ op: 'write', tmp, path: w.path, bytes: Buffer.from(w.bytes), mode: w.mode });
    writeAll(fd, typeof w.bytes === 'string' ? Buffer.from(w.bytes) : w.bytes);
    if (sync) {
      diskSteps.note?.({ op: 'fsync', tmp });
      fsyncSync(fd);
    }
  } catch (err) {
    closeSync(fd);
    unlinkQuietly(tmp);
    throw new Error(
      `Could not write ${w.path}: ${(err as Error).message}. Check free space and permissions on ${dir}.`,
      {
        cause: err,
      },
    );
  }
  closeSync(fd);
  return tmp;
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
}

/** Remove a file and fsync its directory, so it does not come back after a power cut. */
export async function unlinkDurably(path: string): Promise<void> {
  diskSteps.note?.({ op: 'unlink', path });
  unlinkSync(path);
  fsyncDir(dirname(path));
}

/** fsync a directory so a rename or unlink in it is durable. */
export async function syncDir(dir: string): Promise<void> {
  fsyncDir(dir);
}

function fsyncDir(dir: string): void {
  diskSteps.note?.({ op: 'fsyncdir', dir });
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
