// <stateDir>/applied.json: what this host holds and where each thing came
// from. It is how removal by omission knows what to remove, so it is written
// atomically and only by the engine.
import { mkdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Origin } from '../../src/wire/resources.js';
import type { HeldEntry } from '../../src/wire/report.js';
import { writeAtomic } from '../../src/sys/atomic.js';
import { refuse } from '../../src/sys/errors.js';

interface StateFile {
  v: 1;
  resources: HeldEntry[];
}

export const statePath = (stateDir: string) => join(stateDir, 'applied.json');

/** D3: an entry written before `origin` existed came from the bundle. */
export function withOrigin(h: Omit<HeldEntry, 'origin'> & { origin?: Origin }): HeldEntry {
  return { ...h, origin: h.origin === 'declared' ? 'declared' : 'carried' };
}

export async function readState(stateDir: string): Promise<HeldEntry[]> {
  let text: string;
  try {
    // Synchronous, as keep.ts and serial.ts read theirs: a small file, and no thread-pool round trips.
    text = readFileSync(statePath(stateDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
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
  return parsed.resources.map(withOrigin);
}

export async function writeState(stateDir: string, held: HeldEntry[]): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const body: StateFile = { v: 1, resources: held };
  await writeAtomic(statePath(stateDir), JSON.stringify(body, null, 2) + '\n', 0o600);
}
