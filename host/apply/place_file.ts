// What file and secret share: look at a file on disk, put exact bytes there.
import { lstatSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { writeAtomic, unlinkDurably, type Owner } from '../../src/sys/atomic.js';
import { checkPath, checkRealPath } from './paths.js';
import type { DriverContext, Observed } from './driver.js';

export interface Wanted {
  id: string;
  path: string;
  bytes: Uint8Array;
  mode: number;
  owner: Owner;
  createOnce: boolean;
}

export async function observeFile(
  w: Omit<Wanted, 'bytes'> & { bytes: () => Uint8Array },
  ctx: DriverContext,
): Promise<Observed> {
  checkPath(w.path, ctx);
  // Looking is synchronous: a stat and a read of a small file from the page cache
  // are microseconds, and each asynchronous call was a round trip to libuv's thread
  // pool (four for a readFile). Writing is synchronous too (src/sys/atomic.ts says why).
  let st;
  try {
    st = lstatSync(w.path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw err;
  }
  if (!st.isFile()) return 'drift';
  // D5: a create-once file belongs to whoever edits it after we made it.
  if (w.createOnce) return 'ok';
  if ((st.mode & 0o7777) !== w.mode || st.uid !== w.owner.uid || st.gid !== w.owner.gid) return 'drift';
  const have = readFileSync(w.path);
  return Buffer.compare(have, Buffer.from(w.bytes())) === 0 ? 'ok' : 'drift';
}

/** Put the file in place unless it already is (or is create-once and present). True when written. */
export async function placeFile(w: Wanted, ctx: DriverContext): Promise<boolean> {
  await checkRealPath(w.path, ctx);
  const seen = await observeFile({ ...w, bytes: () => w.bytes }, ctx);
  if (seen === 'ok') return false;
  // Parents inside the roots are made on demand; checkRealPath proved they are inside.
  // Something found at the path has its parent already.
  if (seen === 'absent') mkdirSync(dirname(w.path), { recursive: true, mode: 0o755 });
  // After the journal (D7) the kept declaration can write it again; a create-once
  // file must never be found torn, since D5 leaves whatever it finds there.
  await writeAtomic(w.path, w.bytes, w.mode, w.owner, !ctx.journaled ? 'durable' : w.createOnce ? 'whole' : 'redone');
  ctx.changed.add(w.id);
  ctx.changed.add(w.path);
  return true;
}

export async function removeFile(path: string, ctx: DriverContext): Promise<void> {
  checkPath(path, ctx);
  try {
    // Durable even after the journal: a file back after a power cut would be
    // named by no record once the state without it is on disk.
    await unlinkDurably(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
}
