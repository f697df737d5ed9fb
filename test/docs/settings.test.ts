// Every MESH_* variable the programs read is in the settings table
// (settings.ts, from which docs/reference/settings.md is generated), and
// every variable there is still read somewhere.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONTEXTS, storeVariable } from '../../src/store/contexts.js';
import { SETTINGS } from './settings.js';
import { filesUnder } from './ids.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const DIRS = ['src', 'host', 'bundle', 'lab'];

// Not variables: `MESH_NAME=value` is how an install refusal spells the form of --host-env.
const PLACEHOLDERS = new Set(['MESH_NAME']);

/**
 * The MESH_* variables named in TEXTS: every MESH_ word, less the constants
 * the code declares with that prefix (MESH_JS, a path), prefixes written to
 * stand for a family (MESH_STORE_, MESH_HOST_*_SECONDS) and placeholders. A
 * context's store variable reads as MESH_STORE_<CONTEXT>, as the table has it.
 */
export function variablesIn(texts: string[]): Set<string> {
  const all = texts.join('\n');
  const constants = new Set([...all.matchAll(/\b(?:const|let|function)\s+(MESH_[A-Z0-9_]+)/g)].map((m) => m[1]!));
  const stores = new Set(CONTEXTS.map(storeVariable));
  const out = new Set<string>();
  for (const [name] of all.matchAll(/\bMESH_[A-Z0-9_]*[A-Z0-9]\b(?![_*<])/g)) {
    if (constants.has(name) || PLACEHOLDERS.has(name)) continue;
    out.add(stores.has(name) ? 'MESH_STORE_<CONTEXT>' : name);
  }
  return out;
}

const S = suite('every setting read is listed, with its meaning');

S('every MESH_* variable read in src/, host/, bundle/ and lab/ is in the settings table, and no other', () => {
  const texts = filesUnder(root, DIRS, (p) => /\.(ts|sh)$/.test(p)).map((f) => readFileSync(join(root, f), 'utf8'));
  const read = variablesIn(texts);
  const listed = new Set(SETTINGS.map((s) => s.name));
  if (texts.join('').includes('storeVariable(')) read.add('MESH_STORE_<CONTEXT>');
  assert.equal([...read].filter((v) => !listed.has(v)).sort(), [], 'read but not in test/docs/settings.ts');
  assert.equal([...listed].filter((v) => !read.has(v)).sort(), [], 'in test/docs/settings.ts but read nowhere');
  for (const s of SETTINGS) assert.ok(s.meaning.length > 20 && s.default, `${s.name} says what it is and its default`);
});

S(
  'a variable read and not listed is found; constants, families and placeholders are not variables (it can fail)',
  () => {
    const read = variablesIn([
      "const MESH_JS = join(DIST, 'x');\nenv.MESH_NEW_KNOB ?? 3; env.MESH_STORE_AUDIT; MESH_JS",
      '`${MESH_NAME}=value`; MESH_STORE_* and MESH_HOST_*_SECONDS and MESH_STORE_<CONTEXT>; ${MESH_RABBITMQ_RENAME_FROM:-}',
    ]);
    assert.equal([...read].sort(), ['MESH_NEW_KNOB', 'MESH_RABBITMQ_RENAME_FROM', 'MESH_STORE_<CONTEXT>']);
  },
);

S.run();
