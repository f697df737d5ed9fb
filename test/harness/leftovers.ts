// What a suite leaves behind for test/run.ts to judge: the run knows whether
// the suite passed, the suite's own after-hooks do not (uvu tells them
// nothing). A passing suite's databases, vhosts and temp dir are removed by
// the run; a failed one's are kept and named, so a developer can look.
// Under the run, each suite file gets a directory of its own as TMPDIR
// (MESH_TEST_SUITE_DIR), so everything made with tmpdir() is inside it.
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Leftover =
  | { kind: 'database'; name: string; port: number }
  | { kind: 'vhost'; name: string; prefix: string; mgmtPort: number }
  | { kind: 'servers'; dir: string; pgPort: number };

const FILE = 'leftovers.jsonl';

/** The suite's own directory under the run, or undefined when run on its own. */
export const suiteDir = (): string | undefined => process.env.MESH_TEST_SUITE_DIR || undefined;

/** Under the run: note it and leave it (true). On its own: the caller removes it now (false). */
export function leave(l: Leftover): boolean {
  const dir = suiteDir();
  if (!dir) return false;
  appendFileSync(join(dir, FILE), JSON.stringify(l) + '\n');
  return true;
}

export function leftovers(dir: string): Leftover[] {
  let text = '';
  try {
    text = readFileSync(join(dir, FILE), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Leftover);
}
