// Every invariant id used in the code, the SQL and the tests is defined in
// docs/design.md, by a heading `### E1: short title`: a reader who meets
// "(D6)" in a comment or a test's name finds what it means inside the
// repository. ids.ts says what counts as an id.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { definedIds, filesUnder, idsIn, undefinedIds } from './ids.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const DIRS = ['src', 'host', 'sql', 'test', 'bundle', 'lab'];
const TEXT = /\.(ts|sql|sh|tsv|js|html|css)$/;

const I = suite('every invariant id used is defined in docs/design.md');

I('every id used in src/, host/, sql/, test/, bundle/ and lab/ has its heading in docs/design.md', () => {
  const design = join(root, 'docs/design.md');
  assert.ok(
    existsSync(design),
    'docs/design.md is missing: it defines every invariant id, one `### E1: title` heading each',
  );
  const defined = definedIds(readFileSync(design, 'utf8'));
  const missing = undefinedIds(
    root,
    filesUnder(root, DIRS, (p) => TEXT.test(p)),
    defined,
  );
  assert.equal(
    [...missing].map(([id, at]) => `${id} (${at.join(', ')})`),
    [],
    'used but not defined in docs/design.md (add a `### ID: title` heading there, or correct the id)',
  );
});

I('the check finds an id used and not defined, and only that one (it can fail)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ids-'));
  mkdirSync(join(dir, 'src'));
  // Spelled apart, so this file itself uses no undefined id.
  const stray = 'Z' + '9';
  writeFileSync(
    join(dir, 'src', 'a.ts'),
    `// the rule (E1) and a stray (${stray}); SIGUSR1, X25519, MSHM0-M7, A-Z0-9, 3A:9F:C1, B2:7E, V8\n`,
  );
  const design = '# design\n\n### E1: a token is spent once\n\ntext\n#### E2: not a definition\n';
  const missing = undefinedIds(
    dir,
    filesUnder(dir, ['src'], () => true),
    definedIds(design),
  );
  assert.equal([...missing.keys()], [stray]);
  assert.equal(missing.get(stray), ['src/a.ts:1']);
  assert.equal(idsIn('(D6) and W1.11, O3: x'), ['D6', 'W1', 'O3']);
});

I.run();
