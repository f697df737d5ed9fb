// What src/, host/ and bundle/ refuse with: every `refuse('MSHnn', ...)` call,
// read from the TypeScript source (the one way TypeScript raises a code).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FAULT_CODES, type WireFault } from '../../src/wire/envelope.js';

export const TOP = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

export interface TsRaise {
  file: string;
  line: number;
  code: string;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

/** The argument text of the call whose opening parenthesis is at OPEN in TEXT, quotes and nesting skipped; its lines may be many. */
function argsAt(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'" || c === '"' || c === '`') {
      for (i++; i < text.length && text[i] !== c; i++) if (text[i] === '\\') i++;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return text.slice(open + 1, i);
  }
  return text.slice(open + 1);
}

/** Every refuse() call in TEXT; a call whose code is not a literal reads as code '?', so a computed code cannot hide. */
export function raisesIn(text: string): { line: number; code: string }[] {
  const out: { line: number; code: string; at: number }[] = [];
  const lineOf = (at: number) => text.slice(0, at).split('\n').length;
  const lineText = (at: number) => text.slice(text.lastIndexOf('\n', at) + 1, at);
  // A call's code may sit on a line of its own (as the formatter writes a long call): the call is read whole.
  // A WireError raises its literal code, or its literal fault's (FAULT_CODES); a computed fault without a code reads as '?'.
  for (const m of text.matchAll(/(?<![.\w])new WireError\(/g)) {
    if (/^\s*(\/\/|\*)/.test(lineText(m.index))) continue;
    const args = argsAt(text, m.index + m[0].length - 1);
    const fault = /^\s*'([a-z-]+)'/.exec(args)?.[1];
    const code = /,\s*'(MSH[0-9A-Z]{2})'\s*,?\s*$/.exec(args)?.[1];
    out.push({ at: m.index, line: lineOf(m.index), code: code ?? FAULT_CODES[fault as WireFault] ?? '?' });
  }
  // refuse( not after a dot: a method of that name (this.refuse in host/agent.ts) is another thing.
  for (const m of text.matchAll(/(?<![.\w])refuse\(/g)) {
    const before = lineText(m.index);
    if (/^\s*(\/\/|\*)/.test(before)) continue; // a comment that names refuse('MSH80', ...) raises nothing
    if (/\b(private|function)\s+$/.test(before)) continue; // a definition of another refuse
    const code = /^\s*'([^']*)'/.exec(argsAt(text, m.index + m[0].length - 1))?.[1];
    out.push({ at: m.index, line: lineOf(m.index), code: code ?? '?' });
  }
  return out.sort((x, y) => x.at - y.at).map(({ line, code }) => ({ line, code }));
}

export function tsRaises(): TsRaise[] {
  const out: TsRaise[] = [];
  for (const d of ['src', 'host', 'bundle']) {
    for (const f of walk(join(TOP, d))) {
      const file = relative(TOP, f);
      if (file === 'src/sys/errors.ts') continue; // where refuse() is defined
      for (const r of raisesIn(readFileSync(f, 'utf8'))) out.push({ file, ...r });
    }
  }
  return out;
}

/** The codes the tests name: every MSHnn in a .ts file under test/ but this scanner's and the register's own test. */
export function testedCodes(): Set<string> {
  const seen = new Set<string>();
  for (const f of walk(join(TOP, 'test'))) {
    const file = relative(TOP, f);
    if (file === 'test/sys/errors.test.ts' || file === 'test/sys/ts_codes.ts') continue;
    for (const m of readFileSync(f, 'utf8').matchAll(/MSH[0-9A-Z]{2}/g)) seen.add(m[0]);
  }
  return seen;
}
