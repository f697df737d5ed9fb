// Where a network dispatcher hook finds this process to rouse it
// (bundle/hooks/50-mesh-host-rouse). Written only once SIGUSR1 is ours: a
// hook that signalled a process still starting would open node's inspector
// rather than rouse it. Removed on the way out only if it still names us, so
// a second mesh-host started over it is not left unfindable.
import { mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function writePidFile(path: string, pid = process.pid): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${pid}.tmp`;
  writeFileSync(tmp, `${pid}\n`, { mode: 0o644 });
  renameSync(tmp, path); // a hook never reads half a number
}

export function removePidFile(path: string, pid = process.pid): void {
  try {
    if (readFileSync(path, 'utf8').trim() === String(pid)) unlinkSync(path);
  } catch {
    /* already gone */
  }
}
