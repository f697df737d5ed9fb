// A user name from a declaration, turned into the ids chown needs.
import { readFile } from 'node:fs/promises';
import type { Owner } from '../../src/sys/atomic.js';
import { run } from '../../src/sys/proc.js';
import { refuse } from '../../src/sys/errors.js';

/** uid and primary gid of `name`; root when absent. /etc/passwd first, then `id` (LDAP, sssd). */
export async function resolveOwner(name: string | undefined): Promise<Owner> {
  if (name === undefined || name === 'root') return { uid: 0, gid: 0 };
  const passwd = await readFile('/etc/passwd', 'utf8').catch(() => '');
  for (const line of passwd.split('\n')) {
    const f = line.split(':');
    if (f[0] === name && f.length >= 4) return { uid: Number(f[2]), gid: Number(f[3]) };
  }
  try {
    const uid = (await run('id', ['-u', '--', name])).trim();
    const gid = (await run('id', ['-g', '--', name])).trim();
    return { uid: Number(uid), gid: Number(gid) };
  } catch (err) {
    throw refuse('MSH88', `User ${name} does not exist on this host`, undefined, err);
  }
}

/** "0644" -> 0o644, refusing anything that is not an octal mode. */
export function parseMode(mode: string | undefined, fallback: number): number {
  if (mode === undefined) return fallback;
  if (!/^0?[0-7]{3,4}$/.test(mode)) throw refuse('MSH89', `Mode ${JSON.stringify(mode)} is not an octal mode`);
  return parseInt(mode, 8);
}
