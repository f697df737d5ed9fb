// What sql/ raises, read from the migrations as PostgreSQL would end up with
// them: migrations run in order within a context and `create or replace`
// replaces, so the last definition of each function is the one that raises.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONTEXTS } from '../../src/store/contexts.js';
import { SQL_ROOT } from '../../src/store/migrate.js';

export interface Raise {
  /** schema.function, or FILE for a raise outside any function (a do block). */
  where: string;
  schema: string;
  file: string;
  /** The message template, e.g. 'no enrolled node %'. */
  message: string;
  /** Its errcode, or null when the raise names none. */
  code: string | null;
}

const FUNCTION = /create\s+(?:or\s+replace\s+)?function\s+([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\s*\(/gi;

/** The body between the first dollar quote after `from` and its closing twin. */
function body(text: string, from: number): { start: number; end: number } {
  const open = /\$([A-Za-z_]*)\$/g;
  open.lastIndex = from;
  const m = open.exec(text);
  if (!m) throw new Error(`no dollar-quoted body after offset ${from}`);
  const close = text.indexOf(m[0], m.index + m[0].length);
  if (close < 0) throw new Error(`unclosed ${m[0]} body after offset ${from}`);
  return { start: m.index + m[0].length, end: close };
}

function raisesIn(text: string): { message: string; code: string | null }[] {
  const out: { message: string; code: string | null }[] = [];
  // A raise runs to its semicolon; our messages and hints hold none.
  for (const m of text.matchAll(/raise\s+exception\s+'((?:[^']|'')*)'([^;]*);/gi)) {
    const code = /errcode\s*=\s*'([^']*)'/i.exec(m[2]!);
    out.push({ message: m[1]!, code: code ? code[1]! : null });
  }
  const errcodes = (text.match(/errcode/gi) ?? []).length;
  const read = out.filter((r) => r.code !== null).length;
  if (errcodes !== read)
    throw new Error(
      `an errcode this scanner could not tie to a raise (${errcodes} seen, ${read} read): write it as raise exception '...' using errcode = 'MSHnn'`,
    );
  return out;
}

/** SQL without its comments, strings kept: a banner may say "raise" or "create function", a hint may say --git. */
export function withoutComments(sql: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (!quoted && c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
      out += '\n';
      continue;
    }
    if (!quoted && c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 1;
      out += ' ';
      continue;
    }
    if (c === "'") quoted = !quoted;
    out += c;
  }
  return out;
}

/** Every raise in the functions as they stand after every migration, and in any do block. */
export function sqlRaises(root = SQL_ROOT): Raise[] {
  const last = new Map<string, { schema: string; file: string; text: string }>();
  const loose: Raise[] = [];
  // The superuser's setup script defines a function too (audit's trigger guard), in its context's schema.
  const setup = withoutComments(readFileSync(join(root, 'create_contexts.sql'), 'utf8'));
  for (const m of setup.matchAll(FUNCTION)) {
    const b = body(setup, m.index! + m[0].length);
    last.set(`${m[1]}.${m[2]}`, { schema: m[1]!, file: 'create_contexts.sql', text: setup.slice(b.start, b.end) });
  }
  for (const ctx of CONTEXTS) {
    for (const name of readdirSync(join(root, ctx))
      .filter((f) => f.endsWith('.sql'))
      .sort()) {
      const file = `${ctx}/${name}`;
      const text = withoutComments(readFileSync(join(root, ctx, name), 'utf8'));
      let rest = '';
      let at = 0;
      for (const m of text.matchAll(FUNCTION)) {
        if (m.index! < at) continue; // named inside the body before
        const b = body(text, m.index! + m[0].length);
        rest += text.slice(at, m.index);
        at = b.end;
        last.set(`${m[1]}.${m[2]}`, { schema: m[1]!, file, text: text.slice(b.start, b.end) });
      }
      rest += text.slice(at);
      for (const r of raisesIn(rest)) loose.push({ where: file, schema: ctx, file, ...r });
    }
  }
  const out: Raise[] = [...loose];
  for (const [where, f] of last)
    for (const r of raisesIn(f.text)) out.push({ where, schema: f.schema, file: f.file, ...r });
  return out;
}
