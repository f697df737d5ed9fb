// <stateDir>/applied.json: what this host holds and where each thing came
// from, and the highest declaration serial it ever took (its mark, D2). It is
// how removal by omission knows what to remove, so it is written atomically
// and only by the engine.
import { mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Origin } from '../../src/wire/resources.js';
import type { HeldEntry } from '../../src/wire/report.js';
import { writeAtomic, type Durability } from '../../src/sys/atomic.js';
import { refuse } from '../../src/sys/errors.js';

/** D2: the highest declaration serial this host took, and the digest of that declaration. */
export interface Mark {
  serial: number;
  digest: string;
}

export const NO_MARK: Mark = { serial: 0, digest: '' };

interface StateFile {
  v: 1;
  resources: HeldEntry[];
  /** Absent in a state file from before the mark moved here (serial.json held it). */
  mark?: Mark;
}

export interface Record {
  held: HeldEntry[];
  mark: Mark;
}

export const statePath = (stateDir: string) => join(stateDir, 'applied.json');

/** D3: an entry written before `origin` existed came from the bundle. */
export function withOrigin(h: Omit<HeldEntry, 'origin'> & { origin?: Origin }): HeldEntry {
  return { ...h, origin: h.origin === 'declared' ? 'declared' : 'carried' };
}

export const isMark = (m: unknown): m is Mark =>
  !!m &&
  typeof m === 'object' &&
  Number.isSafeInteger((m as Mark).serial) &&
  (m as Mark).serial >= 0 &&
  typeof (m as Mark).digest === 'string';

export function readRecord(stateDir: string): Record {
  let text: string;
  try {
    // Synchronous, as keep.ts and serial.ts read theirs: a small file, and no thread-pool round trips.
    text = readFileSync(statePath(stateDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { held: [], mark: NO_MARK };
    throw err;
  }
  let parsed: Partial<StateFile>;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw refuse('MSHI8', `${statePath(stateDir)} is not valid JSON`, undefined, err);
  }
  if (!parsed || typeof parsed !== 'object' || parsed.v !== 1 || !Array.isArray(parsed.resources)) {
    throw refuse('MSHI9', `${statePath(stateDir)} is not a version 1 state file`);
  }
  // Read as 0 it would reopen exactly the replay the mark exists to stop.
  if (parsed.mark !== undefined && !isMark(parsed.mark))
    throw refuse('MSHF4', `the mark in ${statePath(stateDir)} is damaged`);
  return { held: parsed.resources.map(withOrigin), mark: parsed.mark ?? NO_MARK };
}

export async function readState(stateDir: string): Promise<HeldEntry[]> {
  return readRecord(stateDir).held;
}

export function stateText(r: Record): string {
  const body: StateFile = { v: 1, resources: r.held, ...(r.mark.serial ? { mark: r.mark } : {}) };
  return JSON.stringify(body, null, 2) + '\n';
}

export async function writeState(stateDir: string, r: Record, durability: Durability = 'durable'): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeAtomic(statePath(stateDir), stateText(r), 0o600, undefined, durability);
}
