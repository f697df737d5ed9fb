// The rows of test/mutations.tsv and what can be told of one without building:
// its file is there, its find string occurs once, and, for SQL, the function or
// view it edits is not replaced by a later migration. A migration is never
// edited (M1), so a rule changed later lives in a new file that repeats the
// definition; a row left on the old file mutates text no database runs any
// more, and survives while proving nothing (it happened: five rows on
// inventory 0007 after 0008 replaced node_status).
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join, dirname, basename } from 'node:path';

export const HEADER = 'invariant\tfile\tfind\treplace\ttest_filter\tnote';

export interface Row {
  id: string;
  line: number;
  invariant: string;
  file: string;
  find: string;
  replace: string;
  filters: string[];
  note: string;
}

/** `\n`, `\t` and `\\` in find and replace; anything else is kept as written. */
function unescape(s: string): string {
  return s.replace(/\\([nt\\])/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : '\\'));
}

export function readRows(text: string, table = 'test/mutations.tsv'): Row[] {
  const lines = text.split('\n');
  const first = lines.findIndex((l) => l.trim() !== '' && !l.startsWith('#'));
  if (first < 0 || lines[first] !== HEADER)
    throw new Error(
      `${table}: the first line that is not a comment must be the header "${HEADER.replace(/\t/g, '\\t')}"; put it back.`,
    );
  const rows: Row[] = [];
  const seen = new Map<string, number>();
  lines.forEach((l, i) => {
    if (i <= first || l.trim() === '' || l.startsWith('#')) return;
    const f = l.split('\t');
    if (f.length !== 6)
      throw new Error(`${table}:${i + 1}: a row has 6 tab-separated fields, this one has ${f.length}; fix the row.`);
    const [invariant, file, find, replace, filter, note] = f as [string, string, string, string, string, string];
    const filters = filter.split(' ').filter(Boolean);
    if (!invariant || !file || !find || filters.length === 0)
      throw new Error(`${table}:${i + 1}: invariant, file, find and test_filter must not be empty; fix the row.`);
    const n = (seen.get(invariant) ?? 0) + 1;
    seen.set(invariant, n);
    rows.push({
      id: `${invariant}.${n}`,
      line: i + 1,
      invariant,
      file,
      find: unescape(find),
      replace: unescape(replace),
      filters,
      note,
    });
  });
  return rows;
}

// A later create defines a name again; a later drop leaves the earlier text run by no database.
const DEFINES =
  /(create\s+(?:or\s+replace\s+)?(?:materialized\s+)?|drop\s+(?:materialized\s+)?)(function|procedure|view)\s+(?:if\s+exists\s+)?([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)/gi;

const STATEMENT =
  /create\s+(?:or\s+replace\s+)?(?:constraint\s+|materialized\s+|unique\s+|temp(?:orary)?\s+)*(\w+)\s+(?:if\s+not\s+exists\s+)?([a-z_][a-z0-9_.]*)/gi;

/**
 * The function or view (schema.name) whose definition holds `at`, in a
 * migration's text: the last `create` begun at or before it. A trigger, table or
 * index statement there gives null (its text is not replaced by a later
 * `create or replace function` of the same name).
 */
export function definitionAt(text: string, at: number): string | null {
  let last: RegExpMatchArray | null = null;
  for (const m of text.matchAll(STATEMENT)) {
    if (m.index! > at) break;
    last = m;
  }
  if (!last || !/^(function|procedure|view)$/i.test(last[1]!) || !last[2]!.includes('.')) return null;
  return last[2]!.toLowerCase();
}

/** The later migration (of any context) that defines NAME again or drops it, and which, or null. */
function redefinedAfter(root: string, file: string, name: string): { file: string; drops: boolean } | null {
  const sqlDir = join(root, 'sql');
  const here = basename(file);
  for (const ctx of readdirSync(sqlDir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    const dir = join(sqlDir, ctx.name);
    const later = readdirSync(dir)
      .filter((f) => f.endsWith('.sql') && (join('sql', ctx.name) !== dirname(file) || f > here))
      .sort();
    for (const f of later) {
      const touches = [...readFileSync(join(dir, f), 'utf8').matchAll(DEFINES)].filter(
        (m) => m[3]!.toLowerCase() === name,
      );
      if (touches.length) return { file: `sql/${ctx.name}/${f}`, drops: touches.every((m) => /^drop/i.test(m[1]!)) };
    }
  }
  return null;
}

/**
 * What is wrong with a row before anything is built, or null. Contexts migrate
 * one after another, so "later" for another context's file is approximate;
 * a context redefining another's function would be a defect of its own.
 */
export function rowProblem(root: string, r: Row): string | null {
  const p = join(root, r.file);
  if (!existsSync(p)) return `line ${r.line}: ${r.file} does not exist`;
  const text = readFileSync(p, 'utf8');
  const n = text.split(r.find).length - 1;
  if (n !== 1) return `line ${r.line}: the find string occurs ${n} times in ${r.file}, it must occur exactly once`;
  if (!/^sql\/[a-z]+\/\d{4}-[a-z0-9-]+\.sql$/.test(r.file)) return null;
  const name = definitionAt(text, text.indexOf(r.find));
  if (!name) return null;
  const later = redefinedAfter(root, r.file, name);
  if (!later) return null;
  return later.drops
    ? `line ${r.line}: ${r.file} defines ${name}, but ${later.file} drops it: the mutant edits text no database runs; point the row at the rule's live home, or remove it`
    : `line ${r.line}: ${r.file} defines ${name}, but ${later.file} defines it again: the mutant edits text no database runs; point the row at ${later.file}`;
}
