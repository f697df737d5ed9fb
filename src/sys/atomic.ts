// The one way a file is written on a node: a reader (or a crash) sees the old
// bytes or the new ones, never a half-written file, and never a moment where
// a key is readable by anyone but its owner.
import { open, rename, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

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
  const fh = await open(tmp, 'wx', mode & 0o600);
  try {
    // open() applies the umask, which only narrows; chmod/chown now, while the
    // file is still empty, so the final mode is exact and nothing secret is
    // ever readable under a wider mode or the wrong owner.
    if (owner) await fh.chown(owner.uid, owner.gid);
    await fh.chmod(mode);
    await fh.writeFile(bytes);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => {});
    await unlink(tmp).catch(() => {});
    throw new Error(`Could not write ${path}: ${(err as Error).message}. Check free space and permissions on ${dir}.`, {
      cause: err,
    });
  }
  await fh.close();
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw new Error(
      `Could not put ${path} in place: ${(err as Error).message}. Remove whatever is at ${path} if it is not a file.`,
      { cause: err },
    );
  }
  await syncDir(dir);
}

/** fsync a directory so a rename or unlink in it is durable. */
export async function syncDir(dir: string): Promise<void> {
  const dh = await open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
