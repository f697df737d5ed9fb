// Mutants nobody chose by hand (`npm run mutants -- --generated`): a table
// written by the same hands as the tests removes rules the way the tests
// expect, so these are made from the code alone.
// - Every refusal code of the register: each raise site made unreachable, one
//   at a time (SQL `raise exception ... using errcode` becomes `null;`, a
//   TypeScript `throw refuse('CODE'` or `throw new WireError(` becomes a
//   `void` of the same value, `return refuse(` returns nothing), run against
//   the test files that name the code. A code no test file names is reported
//   by name and not run: nothing could notice it.
// - Every guard of the functions that spend, mark, take, settle, halt or
//   release (the newest definition of each in sql/): each `where`/`and`
//   condition dropped in turn (a lone condition becomes `true`), each
//   comparison turned to its neighbour (> and >=, < and <=), run against the
//   test files that name the function and those named for what it acts on
//   (advance_rollout: rollout), else its context's.
// Each mutant is a Row as test/mutations.tsv's are, with a find string made
// unique in its file, so the runner applies, builds and judges it the same
// way: a mutant that does not apply or does not build is an error, never a kill.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { FAULT_CODES, type WireFault } from '../src/wire/envelope.js';
import type { Row } from './mutation_rows.js';

export interface Generated extends Row {
  kind: 'refusal' | 'guard';
  /** The code (refusal) or schema.function (guard) the mutant is about. */
  subject: string;
}

export interface Generation {
  rows: Generated[];
  /** Codes of the register no runnable test file names: reported by name, never run. */
  untested: string[];
  /** Codes the register lists but no scanned raise site raises (WireError values, raises only while migrating). */
  unraised: string[];
  /** What was not generated, and why (a raise site of a form not handled). */
  skipped: string[];
}

/** Verbs whose functions' guards are mutated, as the start of a name; settle anywhere in it. */
const GUARDED = /^(spend|mark|take|release|halt)_|settle/;
/** Test folders not run here: booted machines, the lab, benchmarks. */
const NOT_RUN = /^(machine|lab|bench)\//;
/** Test files that name codes to check a scan (the register's, the generator's own fixture), not a refusal's behaviour. */
const NOT_BEHAVIOUR = new Set(['sys/errors.test.ts', 'unit/mutants_generated.test.ts']);

function walk(dir: string, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

/**
 * SQL with its comments blanked and the inside of its string literals blanked,
 * the same length as the text: keywords and operators found in it are code.
 */
export function maskSql(sql: string): string {
  const out = sql.split('');
  let quoted = false;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (quoted) {
      if (c === "'") quoted = false;
      else if (c !== '\n') out[i] = ' ';
      continue;
    }
    if (c === '-' && sql[i + 1] === '-') {
      for (; i < sql.length && sql[i] !== '\n'; i++) out[i] = ' ';
      continue;
    }
    if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const stop = end < 0 ? sql.length : end + 2;
      for (; i < stop; i++) if (sql[i] !== '\n') out[i] = ' ';
      i--;
      continue;
    }
    if (c === "'") quoted = true;
  }
  return out.join('');
}

const FUNCTION = /create\s+(?:or\s+replace\s+)?function\s+([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)\s*\(/gi;
/** A function dropped: a later migration may drop one and define none again, leaving its raises text no database runs. */
const DROP = /drop\s+function\s+(?:if\s+exists\s+)?([a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)/gi;

interface Definition {
  name: string;
  file: string;
  start: number;
  end: number;
}

/** The newest definition of each function: contexts in migration order, files in order, a later create replacing, a drop removing. */
export function newestDefinitions(root: string, contexts: readonly string[]): Map<string, Definition> {
  const last = new Map<string, Definition>();
  for (const ctx of contexts) {
    const dir = join(root, 'sql', ctx);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)
      .filter((n) => n.endsWith('.sql'))
      .sort()) {
      const file = `sql/${ctx}/${f}`;
      const masked = maskSql(readFileSync(join(root, file), 'utf8'));
      const drops = [...masked.matchAll(DROP)];
      const dropUpTo = (to: number) => {
        while (drops.length && drops[0]!.index! < to) last.delete(drops.shift()![1]!.toLowerCase());
      };
      let at = 0;
      for (const m of masked.matchAll(FUNCTION)) {
        if (m.index! < at) continue;
        dropUpTo(m.index!);
        const open = /\$([A-Za-z_]*)\$/g;
        open.lastIndex = m.index! + m[0].length;
        const q = open.exec(masked);
        if (!q) continue;
        const close = masked.indexOf(q[0], q.index + q[0].length);
        if (close < 0) continue;
        at = close + q[0].length;
        last.set(m[1]!.toLowerCase(), { name: m[1]!.toLowerCase(), file, start: q.index + q[0].length, end: close });
      }
      dropUpTo(masked.length);
    }
  }
  return last;
}

const lineOf = (text: string, at: number) => text.slice(0, at).split('\n').length;

/**
 * A row that replaces text[s, e) with WITH: the find string is the whole lines
 * around it, widened a line each way until it occurs once in the file.
 */
function edit(text: string, s: number, e: number, by: string): { find: string; replace: string; line: number } {
  let a = text.lastIndexOf('\n', s - 1) + 1;
  let b = text.indexOf('\n', e);
  if (b < 0) b = text.length;
  for (let i = 0; i < 40 && text.split(text.slice(a, b)).length - 1 !== 1; i++) {
    a = a > 0 ? text.lastIndexOf('\n', a - 2) + 1 : 0;
    const nb = text.indexOf('\n', b + 1);
    b = nb < 0 ? text.length : nb;
  }
  return { find: text.slice(a, b), replace: text.slice(a, s) + by + text.slice(e, b), line: lineOf(text, s) };
}

/** Each `where` chain of BODY (masked): its and-conditions as [start, end) offsets into it. */
export function whereChains(masked: string): [number, number][][] {
  const chains: [number, number][][] = [];
  const STOP =
    /^(returning|order|group|limit|offset|for|having|union|except|intersect|window|then|loop|into|on|do|else|elsif|end|select|insert|update|delete|values|set)\b/i;
  for (const w of masked.matchAll(/\bwhere\b/gi)) {
    const conds: [number, number][] = [];
    let depth = 0;
    let cases = 0;
    let start = w.index! + w[0].length;
    let i = start;
    let between = false;
    const close = (end: number) => {
      let s = start;
      while (s < end && /\s/.test(masked[s]!)) s++;
      let t = end;
      while (t > s && /\s/.test(masked[t - 1]!)) t--;
      if (t > s) conds.push([s, t]);
    };
    for (; i < masked.length; i++) {
      const c = masked[i]!;
      if (c === '(') depth++;
      else if (c === ')') {
        if (depth === 0) break;
        depth--;
      } else if (c === ';' && depth === 0) break;
      else if (c === '$' && /^\$[A-Za-z_]*\$/.test(masked.slice(i))) break;
      if (depth > 0 || !/[a-z]/i.test(c) || (i > 0 && /[a-z0-9_.]/i.test(masked[i - 1]!))) continue;
      const word = /^[a-z_][a-z0-9_]*/i.exec(masked.slice(i))![0].toLowerCase();
      if (word === 'case') cases++;
      else if (word === 'end' && cases > 0) {
        cases--;
        i += word.length - 1;
        continue;
      } else if (cases === 0 && word === 'between') between = true;
      else if (cases === 0 && word === 'and') {
        if (between) between = false;
        else {
          close(i);
          start = i + 3;
        }
      } else if (cases === 0 && STOP.test(word)) break;
      i += word.length - 1;
    }
    close(i);
    if (conds.length) chains.push(conds);
  }
  return chains;
}

/** Comparisons of BODY (masked) that have a neighbour: offset, operator, and the neighbour. */
export function comparisons(masked: string): { at: number; op: string; to: string }[] {
  const out: { at: number; op: string; to: string }[] = [];
  const NEXT: Record<string, string> = { '>': '>=', '>=': '>', '<': '<=', '<=': '<' };
  for (const m of masked.matchAll(/[<>=!@#~^&|*/%+-]+/g)) {
    const to = NEXT[m[0]];
    if (to) out.push({ at: m.index!, op: m[0], to });
  }
  return out;
}

/** Runnable test files (relative to test/) and their text: .test.ts and .faults.ts, but not machine/, lab/, bench/. */
function testFiles(root: string): { file: string; text: string; runnable: boolean }[] {
  const dir = join(root, 'test');
  return walk(dir)
    .filter((p) => /\.(test|faults)\.ts$/.test(p))
    .map((p) => {
      const file = relative(dir, p);
      return { file, text: readFileSync(p, 'utf8'), runnable: !NOT_RUN.test(file) && !NOT_BEHAVIOUR.has(file) };
    });
}
/** A test file as a run.js pattern: its path under test/ without .ts, so it names that file alone. */
const pattern = (file: string) => file.replace(/\.ts$/, '');

export function generate(root: string, opts: { codes: readonly string[]; contexts: readonly string[] }): Generation {
  const rows: Generated[] = [];
  const skipped: string[] = [];
  const tests = testFiles(root);
  const naming = (word: string | RegExp) =>
    tests.filter((t) => (typeof word === 'string' ? t.text.includes(word) : word.test(t.text)));
  const counts = new Map<string, number>();
  const add = (
    kind: Generated['kind'],
    subject: string,
    file: string,
    e: ReturnType<typeof edit>,
    filters: string[],
    note: string,
  ) => {
    const n = (counts.get(subject) ?? 0) + 1;
    counts.set(subject, n);
    rows.push({
      kind,
      subject,
      id: `${kind === 'refusal' ? 'raise' : 'guard'}:${subject}.${n}`,
      line: e.line,
      invariant: subject,
      file,
      find: e.find,
      replace: e.replace,
      filters,
      note: `${file}:${e.line}: ${note}`,
    });
  };

  // Refusals: where each code is raised.
  const sites: { code: string; file: string; s: number; e: number; by: string; what: string; fault?: string }[] = [];
  const defs = newestDefinitions(root, opts.contexts);
  for (const d of defs.values()) {
    const text = readFileSync(join(root, d.file), 'utf8');
    const masked = maskSql(text);
    const re = /\braise\s+exception\b/gi;
    re.lastIndex = d.start;
    for (let m = re.exec(masked); m && m.index < d.end; m = re.exec(masked)) {
      const end = masked.indexOf(';', m.index);
      const code = /errcode\s*=\s*'([^']+)'/i.exec(text.slice(m.index, end))?.[1];
      if (!code) continue;
      sites.push({ code, file: d.file, s: m.index, e: end + 1, by: 'null;', what: `${d.name} raises ${code}` });
    }
  }
  for (const base of ['src', 'host', 'bundle']) {
    for (const p of walk(join(root, base)).filter((f) => f.endsWith('.ts'))) {
      const file = relative(root, p);
      if (file === 'src/sys/errors.ts') continue; // where refuse() is defined
      const text = readFileSync(p, 'utf8');
      const lineText = (at: number) => text.slice(text.lastIndexOf('\n', at - 1) + 1, text.indexOf('\n', at));
      for (const m of text.matchAll(/(?<![.\w])(throw\s+|return\s+)?refuse\(\s*'(MSH[0-9A-Z]{2})'/g)) {
        if (/^\s*(\/\/|\*)/.test(lineText(m.index!))) continue;
        const code = m[2]!;
        if (!m[1]) {
          skipped.push(`${file}:${lineOf(text, m.index!)}: refuse('${code}') is a value here, not thrown or returned`);
          continue;
        }
        const thrown = m[1].startsWith('throw');
        sites.push({
          code,
          file,
          s: m.index!,
          e: m.index! + m[1].length,
          by: thrown ? 'void ' : 'return undefined as never;\n void ',
          what: `${thrown ? 'throw' : 'return'} refuse('${code}') made unreachable`,
        });
      }
      for (const m of text.matchAll(/(?<![.\w])throw\s+new\s+WireError\(\s*'([a-z-]+)'/g)) {
        if (/^\s*(\/\/|\*)/.test(lineText(m.index!))) continue;
        // The call's own arguments: a literal code among them, else the fault's.
        let depth = 0;
        let j = text.indexOf('(', m.index!);
        const from = j;
        for (; j < text.length; j++) {
          if (text[j] === '(') depth++;
          else if (text[j] === ')' && --depth === 0) break;
        }
        const args = text.slice(from, j);
        const code = /'(MSH[0-9A-Z]{2})'\s*,?\s*$/.exec(args)?.[1] ?? FAULT_CODES[m[1] as WireFault];
        if (!code) {
          skipped.push(`${file}:${lineOf(text, m.index!)}: a WireError of fault ${m[1]} with no code`);
          continue;
        }
        const t = /^throw\s+/.exec(text.slice(m.index!))![0];
        sites.push({
          code,
          file,
          s: m.index!,
          e: m.index! + t.length,
          by: 'void ',
          what: `throw new WireError(${m[1]}) made unreachable`,
          fault: m[1]!,
        });
      }
    }
  }
  const untested: string[] = [];
  const raised = new Set(sites.map((x) => x.code));
  for (const code of opts.codes) {
    const here = sites.filter((x) => x.code === code);
    if (here.length === 0) continue;
    // A WireError is asserted by its fault (fault: 'malformed') as often as by its code.
    const faults = new Set(here.flatMap((x) => (x.fault ? [`'${x.fault}'`] : [])));
    const named = [...new Set([...naming(code), ...[...faults].flatMap((f) => naming(f))])];
    // Cheapest first (run.js runs them in this order and a mutant stops at its first red file).
    const cost = (f: string) => (f.startsWith('unit/') ? 0 : f.startsWith('sql/') ? 1 : 2);
    const runnable = named
      .filter((t) => t.runnable)
      .map((t) => pattern(t.file))
      .sort((a, b) => cost(a) - cost(b));
    if (runnable.length === 0) {
      untested.push(
        named.length ? `${code} (named only in ${named.map((t) => t.file).join(', ')}, not run here)` : code,
      );
      continue;
    }
    for (const x of here) {
      const text = readFileSync(join(root, x.file), 'utf8');
      add('refusal', code, x.file, edit(text, x.s, x.e, x.by), runnable, x.what);
    }
  }

  // Guards: the newest definitions of the functions that spend, mark, take, settle, halt or release.
  for (const d of [...defs.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    const text = readFileSync(join(root, d.file), 'utf8');
    const masked = maskSql(text);
    const body = masked.slice(d.start, d.end);
    const short = d.name.split('.')[1]!;
    if (!GUARDED.test(short) && !/set\s+state\s*=\s*'(halted|released)'/i.test(text.slice(d.start, d.end))) continue;
    // The test files that name it and those named for what it acts on (advance_rollout: rollout):
    // a SQL test naming the function must not narrow the set to itself. Neither: its context's.
    const noun = short.split('_').slice(1).join('_');
    let named = [
      ...new Set([
        ...naming(new RegExp(`\\b${short}\\b`)).filter((t) => t.runnable),
        ...(noun ? tests.filter((t) => t.runnable && t.file.includes(noun)) : []),
      ]),
    ];
    if (named.length === 0) {
      const ctx = d.name.split('.')[0]!;
      named = tests.filter((t) => t.runnable && (t.file.startsWith(`sql/${ctx}/`) || t.file.startsWith(`${ctx}/`)));
    }
    const filters = named.map((t) => pattern(t.file));
    if (filters.length === 0) {
      untested.push(`${d.name} (no test file names it or its context)`);
      continue;
    }
    for (const chain of whereChains(body)) {
      chain.forEach(([s, e], k) => {
        const cond = text.slice(d.start + s, d.start + e).replace(/\s+/g, ' ');
        if (chain.length === 1) {
          add(
            'guard',
            d.name,
            d.file,
            edit(text, d.start + s, d.start + e, 'true'),
            filters,
            `where ${cond} dropped (true)`,
          );
        } else if (k === 0) {
          add(
            'guard',
            d.name,
            d.file,
            edit(text, d.start + s, d.start + chain[1]![0], ''),
            filters,
            `condition ${cond} dropped`,
          );
        } else {
          add(
            'guard',
            d.name,
            d.file,
            edit(text, d.start + chain[k - 1]![1], d.start + e, ''),
            filters,
            `condition ${cond} dropped`,
          );
        }
      });
    }
    for (const c of comparisons(body)) {
      const at = d.start + c.at;
      const around = text.slice(text.lastIndexOf('\n', at) + 1, text.indexOf('\n', at)).trim();
      add(
        'guard',
        d.name,
        d.file,
        edit(text, at, at + c.op.length, c.to),
        filters,
        `${c.op} turned to ${c.to} in: ${around}`,
      );
    }
  }
  const unraised = opts.codes.filter((c) => !raised.has(c));
  return { rows, untested, unraised, skipped };
}
