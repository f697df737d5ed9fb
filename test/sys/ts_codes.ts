// What src/, host/ and bundle/ refuse with: every `refuse('MSHnn', ...)` call,
// read from the TypeScript source (the one way TypeScript raises a code).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
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

/**
 * Every refuse() call and `new WireError(...)` in TEXT, read from the syntax
 * tree so a call the formatter spread over lines counts as one. A call whose
 * code is not a literal reads as code '?', so a computed code cannot hide.
 */
export function raisesIn(text: string): { line: number; code: string }[] {
  const out: { line: number; code: string }[] = [];
  const src = ts.createSourceFile('x.ts', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lit = (n: ts.Node | undefined) => (n && ts.isStringLiteralLike(n) ? n.text : undefined);
  const at = (n: ts.Node) => src.getLineAndCharacterOfPosition(n.getStart(src)).line + 1;
  const visit = (n: ts.Node): void => {
    // refuse( called by name: a method of that name (this.refuse in host/agent.ts) is another thing.
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'refuse') {
      out.push({ line: at(n), code: lit(n.arguments[0]) ?? '?' });
    }
    // A WireError raises its literal code, or its literal fault's (FAULT_CODES); a computed fault without a code reads as '?'.
    if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'WireError') {
      const args = n.arguments ?? [];
      const code = args.map(lit).find((s) => s !== undefined && /^MSH[0-9A-Z]{2}$/.test(s));
      const fault = lit(args[0]);
      out.push({ line: at(n), code: code ?? (fault ? FAULT_CODES[fault as WireFault] : undefined) ?? '?' });
    }
    ts.forEachChild(n, visit);
  };
  visit(src);
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
