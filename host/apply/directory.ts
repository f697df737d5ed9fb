// A directory with a mode. Removing one removes it only when empty: what is
// inside was either removed first (files go before directories) or is not ours.
import { lstat, mkdir, chmod, rmdir } from 'node:fs/promises';
import type { DirectoryResource } from '../../src/wire/resources.js';
import type { Driver } from './driver.js';
import { digestOf } from './digest.js';
import { parseMode } from './owner.js';
import { checkPath, checkRealPath } from './paths.js';
import { refuse } from '../../src/sys/errors.js';

export const directoryDriver: Driver<DirectoryResource> = {
  kind: 'directory',
  target: (r) => r.path,
  digest: (r) => digestOf({ kind: 'directory', path: r.path, mode: r.mode }),
  async observe(r, ctx) {
    checkPath(r.path, ctx);
    try {
      const st = await lstat(r.path);
      if (!st.isDirectory()) return 'drift';
      return (st.mode & 0o7777) === parseMode(r.mode, 0o755) ? 'ok' : 'drift';
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
      throw err;
    }
  },
  async apply(r, ctx) {
    await checkRealPath(r.path, ctx);
    const mode = parseMode(r.mode, 0o755);
    const seen = await directoryDriver.observe(r, ctx);
    if (seen === 'ok') return false;
    if (seen === 'drift' && !(await lstat(r.path)).isDirectory()) {
      throw refuse('MSHC3', `${r.path} exists and is not a directory`);
    }
    await mkdir(r.path, { recursive: true, mode });
    await chmod(r.path, mode); // mkdir's mode passes through the umask
    ctx.changed.add(r.id);
    ctx.changed.add(r.path);
    return true;
  },
  async remove(held, ctx) {
    checkPath(held.target, ctx);
    try {
      await rmdir(held.target);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') {
        ctx.log(`directory ${held.target} is no longer declared but holds files mesh did not write; left in place`);
        return;
      }
      throw err;
    }
  },
};
