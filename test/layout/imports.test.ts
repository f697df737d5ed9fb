// The layout is the architecture: arrows only run down (STYLE.md "Layout").
// What each folder may import is the README's layout table; this test reads
// every import line of the project and refuses the ones that run back up.
// A cycle or a sideways import starts as one convenient line, so the rule is
// checked on every run, and the checker itself is shown to refuse a bad line.
import { test } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const top = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

const CONTEXTS = ['inventory', 'catalogue', 'assignment', 'secret', 'provision', 'overlay', 'audit'];
const KERNEL = ['sys', 'crypto', 'wire', 'store', 'home', 'broker'];

/** The folder a file belongs to, as the rules name it: `src/wire`, `host`, `bundle`, ... */
export function areaOf(path: string): string {
  const p = path.split(sep).join('/');
  const m = /^src\/([^/]+)\//.exec(p);
  if (m) return `src/${m[1]}`;
  return p.split('/')[0]!;
}

const src = (xs: string[]) => xs.map((x) => `src/${x}`);

/** Who may import whom. A folder may always import itself. */
export const MAY: Record<string, string[]> = {
  'src/sys': [],
  'src/crypto': [],
  'src/wire': src(['crypto']),
  'src/store': src(['sys', 'crypto']),
  'src/home': src(['sys', 'crypto']),
  'src/broker': src(['wire', 'home', 'sys', 'crypto']),
  // A context calls other contexts' functions (a rotation declares); it never
  // opens their stores (checked below, by the store names it connects to).
  ...Object.fromEntries(CONTEXTS.map((c) => [`src/${c}`, src([...KERNEL, ...CONTEXTS])])),
  'src/serve': src([...KERNEL, ...CONTEXTS]),
  // The web console shows what the contexts' functions return, as the CLI prints it; it sends nothing.
  'src/console': src(['sys', 'crypto', 'wire', 'store', ...CONTEXTS]),
  // The CLI prints what functions return: no SQL of its own, no broker.
  'src/cli': src(['sys', 'crypto', 'wire', 'store', 'home', 'serve', 'console', ...CONTEXTS]),
  'src/builder': src(['sys', 'crypto', 'wire', 'broker']),
  host: [...src(['wire', 'crypto', 'broker', 'sys']), 'host'],
  bundle: [...src([...KERNEL, ...CONTEXTS, 'serve', 'cli', 'builder', 'console']), 'host', 'bundle'],
  lab: [...src([...KERNEL, ...CONTEXTS, 'serve', 'cli', 'builder', 'console']), 'host', 'bundle', 'lab'],
};

// The register of refusal codes is data (and one error class): every part,
// mesh-host and the kernel too, refuses with it, and it opens no store.
const ANYONE = new Set(['src/sys/errors.js']);

export interface Violation {
  file: string;
  line: number;
  target: string;
  why: string;
}

const IMPORT = /(?:^|\s)(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;
const STORE_CALL = /(?:connect|withStore)\(\s*'([a-z]+)'/g;

/** Every forbidden import in FILES (project-relative path -> text). */
export function violations(files: Map<string, string>): Violation[] {
  const out: Violation[] = [];
  for (const [file, text] of files) {
    const from = areaOf(file);
    const may = MAY[from];
    if (!may) continue; // test/ may import anything it tests
    const lines = text.split('\n');
    lines.forEach((l, i) => {
      for (const m of l.matchAll(IMPORT)) {
        const spec = m[1] ?? m[2]!;
        const target = relative(top, resolve(top, dirname(file), spec))
          .split(sep)
          .join('/');
        const to = areaOf(target);
        if (to === from || may.includes(to) || ANYONE.has(target)) continue;
        out.push({ file, line: i + 1, target, why: `${from} may not import ${to}` });
      }
      // A context's code opens only its own store (DESIGN.md "Contexts").
      const ctx = from.slice(4);
      if (CONTEXTS.includes(ctx)) {
        for (const m of l.matchAll(STORE_CALL)) {
          if (m[1] !== ctx)
            out.push({
              file,
              line: i + 1,
              target: m[1]!,
              why: `${from} opens the ${m[1]} store; call a function of src/${m[1]} instead`,
            });
        }
      }
    });
  }
  return out;
}

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(top, dir))) {
    const p = join(dir, name);
    if (statSync(join(top, p)).isDirectory()) walk(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

function tree(): Map<string, string> {
  const files = new Map<string, string>();
  for (const d of ['src', 'host', 'bundle', 'lab'])
    for (const f of walk(d)) files.set(f, readFileSync(join(top, f), 'utf8'));
  return files;
}

test('no import in the tree runs against the layout table', () => {
  const v = violations(tree());
  assert.equal(
    v.map((x) => `${x.file}:${x.line} ${x.why} (${x.target})`),
    [],
  );
});

test('no file under src/ imports host/', () => {
  const v = [...tree()].filter(([f, t]) => f.startsWith('src') && /from '(\.\.\/)+host\//.test(t));
  assert.equal(
    v.map(([f]) => f),
    [],
  );
});

test('the checker refuses a forbidden import (so the test above can fail)', () => {
  const bad = new Map([
    ['src/wire/x.ts', "import { connect } from '../store/connect.js';"],
    ['src/sys/y.ts', "import type { Sql } from '../store/connect.js';"],
    ['src/builder/z.ts', "import { x } from '../../host/agent.js';"],
    ['host/q.ts', "import { declare } from '../src/assignment/declare.js';"],
    ['src/cli/w.ts', "import { connectBroker } from '../broker/connect.js';"],
    ['src/secret/v.ts', "const sql = await connect('provision', { max: 1 });"],
    ['src/home/u.ts', "export { thing } from '../broker/accounts.js';"],
    ['src/inventory/t.ts', "const m = await import('../serve/serve.js');"],
  ]);
  const v = violations(bad);
  assert.equal(
    v.map((x) => x.file),
    [...bad.keys()],
  );
  assert.equal(violations(new Map([['src/wire/ok.ts', "import { sign } from '../crypto/sign.js';"]])), []);
});

test('no folder named build or commands under src/', () => {
  for (const d of ['build', 'commands']) assert.not.ok(existsSync(join(top, 'src', d)), `src/${d} exists`);
});

test.run();
