// The host's mark (D2): the highest declaration serial it ever took, and the
// digest of that declaration, kept in applied.json beside what it holds and
// written in the same batch as the kept declaration (docs/design.md D7). The
// kept declaration cannot carry it alone: a kept file damaged or deleted would
// reset the mark to 0, and the mesh's own, genuinely signed older serials
// would then be applied again. Read at start, never lowered. A host from
// before kept it in serial.json: read still, never written.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { readEnvelope, LIMITS } from '../src/wire/envelope.js';
import { refuse } from '../src/sys/errors.js';
import { readRecord, NO_MARK, type Mark } from './apply/state.js';
import { recordMark } from './apply/engine.js';

export type { Mark } from './apply/state.js';

export const serialPath = (dir: string) => join(dir, 'serial.json');

/** sha256 of the signed body text, as the mesh records it (assignment.declaration.digest). */
export function declarationDigest(bytes: Uint8Array): string {
  return createHash('sha256')
    .update(readEnvelope(bytes, LIMITS.declaration, 'declaration').text, 'utf8')
    .digest('hex');
}

/** { serial: 0 } when none was ever taken; a damaged record is a fault, never a 0. */
export function readMark(dir: string): Mark {
  const own = readRecord(dir).mark;
  const old = readOldMark(dir);
  return old.serial > own.serial ? old : own;
}

function readOldMark(dir: string): Mark {
  let text: string;
  try {
    text = readFileSync(serialPath(dir), 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return NO_MARK;
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
  await recordMark(dir, m);
  return m;
}
