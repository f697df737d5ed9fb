// The audit history's head kept outside the store (C3). The chain shows a row
// changed in place; it cannot show a chain rewritten whole (every hash
// recomputed after an edit) or cut from its end, because a rewrite is a whole
// chain too. A head the operator kept where no daemon can write it can:
// `mesh audit verify --head FILE` refuses (MSH76) unless the row it names
// still carries its hash.
import { readFileSync } from 'node:fs';
import { writeAtomic } from '../sys/atomic.js';
import { refuse } from '../sys/errors.js';

export interface Head {
  /** The newest row's seq when the head was taken. */
  seq: number;
  /** That row's hash, 64 hex characters. */
  hash: string;
  /** When the head was taken (for the person keeping it; not checked). */
  taken_at: string;
}

/** A head, as JSON: what `mesh audit head` prints and --out writes. */
export function headText(h: Head): string {
  return JSON.stringify({ seq: h.seq, hash: h.hash, taken_at: h.taken_at }) + '\n';
}

/** Write the head to FILE atomically, 0644: it is not a secret, only something the daemons must not rewrite. */
export async function writeHead(file: string, h: Head): Promise<void> {
  await writeAtomic(file, headText(h), 0o644);
}

/** The head a file keeps; a file that is not one is refused (MSH77), never taken as "no head". */
export function readHead(file: string): Head {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw refuse('MSH77', `${file} is not a kept audit head (${(err as Error).message})`, undefined, err);
  }
  const h = parsed as Partial<Head>;
  if (
    typeof h !== 'object' ||
    h === null ||
    !Number.isSafeInteger(h.seq) ||
    (h.seq as number) < 0 ||
    typeof h.hash !== 'string' ||
    !/^[0-9a-f]{64}$/.test(h.hash)
  ) {
    throw refuse('MSH77', `${file} is not a kept audit head: it needs a seq (a whole number) and a hash (64 hex)`);
  }
  return { seq: h.seq as number, hash: h.hash, taken_at: String(h.taken_at ?? '') };
}
