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

/** Every refuse() call in TEXT; a call whose code is not a literal reads as code '?', so a computed code cannot hide. */
export function raisesIn(text: string): { line: number; code: string }[] {
  const out: { line: number; code: string }[] = [];
  text.split('\n').forEach((l, i) => {
    // A WireError raises its literal code, or its literal fault's (FAULT_CODES); a computed fault without a code reads as '?'.
    for (const m of l.matchAll(
      /(?<![.\w])new WireError\(\s*(?:'([a-z-]+)')?[^\n]*?(?:,\s*'(MSH[0-9A-Z]{2})'\s*\))?\s*;?\s*$/g,
    )) {
      if (/^\s*(\/\/|\*)/.test(l)) continue;
      out.push({ line: i + 1, code: m[2] ?? FAULT_CODES[m[1] as WireFault] ?? '?' });
    }
    // refuse( not after a dot: a method of that name (this.refuse in host/agent.ts) is another thing.
    for (const m of l.matchAll(/(?<![.\w])refuse\(\s*(?:'([^']*)'|([^'\s)][^,)]*))/g)) {
      if (/^\s*(\/\/|\*)/.test(l)) continue; // a comment that names refuse('MSH80', ...) raises nothing
      if (/\b(private|function)\s+refuse\(/.test(l)) continue; // a definition of another refuse
      out.push({ line: i + 1, code: m[1] ?? '?' });
    }
  });
  return out;
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
