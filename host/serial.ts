// <stateDir>/serial.json: the highest declaration serial this host ever
// applied, and the digest of that declaration, on its own file beside
// applied.json (D2). The kept declaration cannot carry it alone: a kept file
// damaged or deleted would reset the mark to 0, and the mesh's own, genuinely
// signed older serials would then be applied again. Written atomically, read
// at start, never lowered.
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { writeAtomic } from '../src/sys/atomic.js';
import { readEnvelope, LIMITS } from '../src/wire/envelope.js';
import { refuse } from '../src/sys/errors.js';

export interface Mark {
  serial: number;
  digest: string;
}

export const serialPath = (dir: string) => join(dir, 'serial.json');

/** sha256 of the signed body text, as the mesh records it (assignment.declaration.digest). */
export function declarationDigest(bytes: Uint8Array): string {
  return createHash('sha256')
    .update(readEnvelope(bytes, LIMITS.declaration, 'declaration').text, 'utf8')
    .digest('hex');
}

/** { serial: 0 } when none was ever applied; a damaged file is a fault, never a 0. */
export function readMark(dir: string): Mark {
  let text: string;
  try {
    text = readFileSync(serialPath(dir), 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return { serial: 0, digest: '' };
    throw err;
  }
  const v = (() => {
    try {
      return JSON.parse(text) as Partial<Mark> & { v?: number };
    } catch {
      return null;
    }
  })();
  if (!v || v.v !== 1 || !Number.isSafeInteger(v.serial) || (v.serial as number) < 0 || typeof v.digest !== 'string') {
    // Reading it as 0 would reopen exactly the replay this file exists to stop.
    throw refuse('MSHI7', `${serialPath(dir)} is damaged`);
  }
  return { serial: v.serial as number, digest: v.digest };
}

/** Raise the mark to M; a lower or equal serial leaves it as it is. */
export async function raiseMark(dir: string, m: Mark): Promise<Mark> {
  const now = readMark(dir);
  if (m.serial <= now.serial) return now;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeAtomic(serialPath(dir), JSON.stringify({ v: 1, ...m }) + '\n', 0o600);
  return m;
}
