// One apply at a time on a host's state, across processes: the running host
// and a bundle re-run (bundle/carried.ts) both read, act on and rewrite
// applied.json, and each would write back its own view and lose the other's
// record. The in-process queue in engine.ts cannot see another process.
//
// flock(2) on <stateDir>/applied.lock, taken by util-linux's `flock` (essential
// on Debian) on a descriptor this process opened and hands it: the lock belongs
// to the open file, which this process keeps, so it is held after `flock` exits
// and is released by closing it -- or by the kernel when this process dies, so
// there is no stale lock to detect. A pid file made with O_EXCL would need
// exactly that detection (a pid read from /proc can be reused) and Node has no flock.
import { open, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { spawn } from 'node:child_process';

export const lockPath = (stateDir: string) => join(stateDir, 'applied.lock');

export async function withStateLock<T>(stateDir: string, fn: () => Promise<T>): Promise<T> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const path = lockPath(stateDir);
  const fh = await open(path, 'a', 0o600);
  try {
    await new Promise<void>((resolve, reject) => {
      // Waits while another process applies; fd 3 is the file opened above.
      const c = spawn('flock', ['--exclusive', '3'], { stdio: ['ignore', 'ignore', 'pipe', fh.fd] });
      let err = '';
      c.stderr!.on('data', (d) => {
        err += d;
      });
      c.on('error', (e) =>
        reject(
          new Error(`Could not lock ${path} (${e.message}). Install util-linux, which provides flock.`, { cause: e }),
        ),
      );
      c.on('exit', (code) =>
        code === 0
          ? resolve()
          : reject(
              new Error(
                `Could not lock ${path}: ${err.trim() || `flock exited ${code}`}. Check that it is on a local filesystem and writable.`,
              ),
            ),
      );
    });
    return await fn();
  } finally {
    await fh.close(); // the last descriptor of the open file: the lock goes with it
  }
}
