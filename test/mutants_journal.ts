// A whole run's verdicts kept as they are reached (`npm run mutants --
// --journal FILE`), so a run stopped part-way goes on where it stopped. A
// verdict counts only for the very tree it was reached on (every file's path
// and bytes) and the very row (its id, file, edit and tests): a changed tree
// or a rewritten row runs again, and so does an error (a server that did not
// start is no verdict on the rule).
import { readFileSync, existsSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import type { Row } from './mutation_rows.js';

export type Verdict = 'killed' | 'survived' | 'error';

export interface JournalLine {
  tree: string;
  row: string;
  /** The row's id, for a person reading the file; the row key is what counts. */
  id: string;
  verdict: Verdict;
  why: string;
  seconds: number;
}

/** One digest of FILES (paths under ROOT) and their bytes, in path order. */
export function treeDigest(root: string, files: string[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort())
    h.update(f)
      .update('\0')
      .update(readFileSync(join(root, f)))
      .update('\0');
  return h.digest('hex');
}

export const rowKey = (r: Row): string =>
  createHash('sha256')
    .update(JSON.stringify([r.id, r.file, r.find, r.replace, r.filters]))
    .digest('hex');

/** The verdicts in PATH reached on TREE, by row key; a line cut short by a stop mid-write is skipped. */
export function readJournal(path: string, tree: string): Map<string, JournalLine> {
  const done = new Map<string, JournalLine>();
  if (!existsSync(path)) return done;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    let j: JournalLine;
    try {
      j = JSON.parse(line);
    } catch {
      continue;
    }
    if (j.tree === tree && j.verdict !== 'error') done.set(j.row, j);
  }
  return done;
}

export function appendJournal(
  path: string,
  tree: string,
  row: Row,
  r: { verdict: Verdict; why: string; seconds: number },
): void {
  const line: JournalLine = { tree, row: rowKey(row), id: row.id, verdict: r.verdict, why: r.why, seconds: r.seconds };
  appendFileSync(path, JSON.stringify(line) + '\n');
}
