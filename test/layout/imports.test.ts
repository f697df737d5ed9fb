// The layout is the architecture: arrows only run down (STYLE.md "Layout").
// What each folder may import is the README's layout table, stated here as
// layers, the order between contexts and a table that narrows them; this test
// reads every import line of the project and refuses the ones that run back
// up, and any circle of files, with no exception by name. A cycle or a
// sideways import starts as one convenient line, so the rule is checked on
// every run, and the checker itself is shown to refuse a bad line.
import { test } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { join, dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const top = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

// Bottom first. A folder may import only folders below it here (and itself):
// the layers are the kernel, the shared parts, the contexts, the programs on
// top (serve, console, builder, cli), then mesh-host, the bundle and the lab.
// Within a layer the order is who may call whom; MAY below narrows it further.
const LAYERS: string[][] = [
  ['src/sys'],
  ['src/crypto', 'src/store', 'src/wire', 'src/home', 'src/broker'],
  ['src/inventory', 'src/catalogue', 'src/overlay', 'src/assignment', 'src/audit', 'src/secret', 'src/provision'],
  ['src/console', 'src/serve', 'src/builder', 'src/cli'],
  ['host'],
  ['bundle'],
  ['lab'],
];
export const ORDER = LAYERS.flat();

/** Which contexts a context may call (and those they may call), with why. */
export const CALLS: Record<string, string[]> = {
  inventory: [],
  catalogue: [],
  overlay: [],
  // Its freshness and rollout windows are durations read as a token's --ttl is (parseDuration, MSH15).
  assignment: ['inventory'],
  // Its retention is such a duration too.
  audit: ['inventory'],
  // A secret accepted or remade is declared to its holders.
  secret: ['assignment'],
  // A pair's credential is sealed and stored by the secret context, then both ends are declared.
  provision: ['secret', 'assignment'],
};
const CONTEXTS = Object.keys(CALLS);
const KERNEL = ['sys', 'crypto', 'wire', 'store', 'home', 'broker'];

/** CALLS followed to its end: what context C may import. */
function callable(c: string, seen = new Set<string>()): string[] {
  for (const d of CALLS[c] ?? []) if (!seen.has(d)) callable(d, seen.add(d));
  return [...seen];
}

/** The folder a file belongs to, as the rules name it: `src/wire`, `host`, `bundle`, ... */
export function areaOf(path: string): string {
  const p = path.split(sep).join('/');
  const m = /^src\/([^/]+)\//.exec(p);
  if (m) return `src/${m[1]}`;
  return p.split('/')[0]!;
}

const src = (xs: string[]) => xs.map((x) => `src/${x}`);

/** Who may import whom. A folder may always import itself. Every entry points down ORDER (checked below). */
export const MAY: Record<string, string[]> = {
  'src/sys': [],
  'src/crypto': [],
  'src/store': src(['sys', 'crypto']),
  'src/wire': src(['sys', 'crypto']),
  'src/home': src(['sys', 'crypto']),
  'src/broker': src(['wire', 'home', 'sys', 'crypto']),
  // A context calls the functions of the contexts CALLS names; it never
  // opens their stores (checked below, by the store names it connects to).
  ...Object.fromEntries(CONTEXTS.map((c) => [`src/${c}`, src([...KERNEL, ...callable(c)])])),
  'src/serve': src([...KERNEL, ...CONTEXTS]),
  // The web console shows what the contexts' functions return, as the CLI prints it; it sends nothing.
  'src/console': src(['sys', 'crypto', 'wire', 'store', ...CONTEXTS]),
  // The CLI prints what functions return: no SQL of its own, no broker.
  'src/cli': src(['sys', 'crypto', 'wire', 'store', 'home', 'serve', 'console', ...CONTEXTS]),
  'src/builder': src(['sys', 'crypto', 'wire', 'broker']),
  host: src(['wire', 'crypto', 'broker', 'sys']),
  bundle: [...src([...KERNEL, ...CONTEXTS, 'serve', 'cli', 'builder', 'console']), 'host'],
  lab: [...src([...KERNEL, ...CONTEXTS, 'serve', 'cli', 'builder', 'console']), 'host', 'bundle'],
};

/** Entries of a MAY table that do not point down ORDER: an arrow back up, or a folder ORDER does not place. */
export function upward(may: Record<string, string[]>): string[] {
  const rank = (a: string) => ORDER.indexOf(a);
  return Object.entries(may).flatMap(([from, tos]) =>
    tos.filter((to) => rank(from) < 0 || rank(to) < 0 || rank(to) >= rank(from)).map((to) => `${from} -> ${to}`),
  );
}

export interface Violation {
  file: string;
  line: number;
  target: string;
  why: string;
}

const IMPORT = /(?:^|\s)(?:import|export)\s[^'"]*?from\s+'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\s*\)/g;
const STORE_CALL = /(?:connect|withStore)\(\s*'([a-z]+)'/g;

/** The project-relative path an import SPEC in FILE names. */
const targetOf = (file: string, spec: string) =>
  relative(top, resolve(top, dirname(file), spec))
    .split(sep)
    .join('/');

/** Every forbidden import in FILES (project-relative path -> text of a file under src/, host/, bundle/ or lab/). */
export function violations(files: Map<string, string>): Violation[] {
  const out: Violation[] = [];
  for (const [file, text] of files) {
    const from = areaOf(file);
    const may = MAY[from];
    if (!may) {
      out.push({ file, line: 1, target: from, why: `${from} has no place in LAYERS and MAY: say what it may import` });
      continue;
    }
    const lines = text.split('\n');
    lines.forEach((l, i) => {
      for (const m of l.matchAll(IMPORT)) {
        const target = targetOf(file, m[1] ?? m[2]!);
        const to = areaOf(target);
        if (to === from || may.includes(to)) continue;
        out.push({ file, line: i + 1, target, why: `${from} may not import ${to}` });
      }
      // A context's code opens only its own store (docs/design.md, "The shape").
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

/** Every circle of imports among FILES, each as its files: a circle inside one folder is a circle too. */
export function circles(files: Map<string, string>): string[][] {
  const deps = new Map<string, string[]>();
  for (const [file, text] of files)
    deps.set(
      file,
      [...text.matchAll(IMPORT)]
        .map((m) => targetOf(file, m[1] ?? m[2]!).replace(/\.js$/, '.ts'))
        .filter((t) => files.has(t)),
    );
  // Tarjan's strongly connected components: a component of more than one file, or a file importing itself, is a circle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of deps.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const c = stack.splice(stack.indexOf(v));
    if (c.length > 1 || deps.get(v)!.includes(v)) out.push(c.sort());
  };
  for (const v of deps.keys()) if (!index.has(v)) visit(v);
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

test('the layers and the order between contexts run down: no entry of MAY points up', () => {
  assert.equal(upward(MAY), []);
});

test('no circle of imports in src/, host/, bundle/ or lab/', () => {
  assert.equal(circles(tree()), []);
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
    ['src/assignment/s.ts', "import { makeSealed } from '../secret/value.js';"],
    ['src/secret/p.ts', "import type { Made } from '../provision/rotate.js';"],
    ['src/inventory/a.ts', "import { history } from '../audit/log.js';"],
    ['src/unplaced/n.ts', "import { refuse } from '../sys/errors.js';"],
  ]);
  const v = violations(bad);
  assert.equal(
    v.map((x) => x.file),
    [...bad.keys()],
  );
  assert.equal(violations(new Map([['src/wire/ok.ts', "import { sign } from '../crypto/sign.js';"]])), []);
  assert.equal(
    violations(new Map([['src/provision/ok.ts', "import { parseDuration } from '../inventory/token.js';"]])),
    [],
  );
});

test('the checker refuses a table entry back up and finds a circle (so the tests above can fail)', () => {
  assert.equal(upward({ ...MAY, 'src/store': ['src/broker'], 'src/secret': ['src/provision'], 'src/nowhere': [] }), [
    'src/store -> src/broker',
    'src/secret -> src/provision',
  ]);
  const ring = new Map([
    ['host/a.ts', "import { b } from './b.js';"],
    ['host/b.ts', "import type { C } from './sub/c.js';"],
    ['host/sub/c.ts', "export { a } from '../a.js';"],
    ['host/d.ts', "import { a } from './a.js';"],
    ['host/e.ts', "const e = await import('./e.js');"],
  ]);
  assert.equal(circles(ring), [['host/a.ts', 'host/b.ts', 'host/sub/c.ts'], ['host/e.ts']]);
  assert.equal(circles(new Map([...ring].filter(([f]) => f !== 'host/sub/c.ts' && f !== 'host/e.ts'))), []);
});

test('no folder named build or commands under src/', () => {
  for (const d of ['build', 'commands']) assert.not.ok(existsSync(join(top, 'src', d)), `src/${d} exists`);
});

test.run();
