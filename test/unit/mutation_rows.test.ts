// The mutation table stays honest without running it (TESTING.md): every row
// edits text that exists once, and no SQL row edits a function or view that a
// later migration defines again, where the mutant would change nothing that
// runs and survive while proving nothing.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { readRows, rowProblem, definitionAt, HEADER, type Row } from '../mutation_rows.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const test = suite('mutation rows');

test('every row of test/mutations.tsv applies, and none edits SQL a later migration replaces', () => {
  const rows = readRows(readFileSync(join(ROOT, 'test', 'mutations.tsv'), 'utf8'));
  assert.ok(rows.length > 100, `${rows.length} rows read`);
  const problems = rows.map((r) => rowProblem(ROOT, r)).filter(Boolean);
  assert.equal(problems, []);
});

test('a row on a view a later migration replaces, or a function it drops, is refused, naming the later file', () => {
  const root = mkdtempSync(join(tmpdir(), 'mesh-rows-'));
  try {
    mkdirSync(join(root, 'sql', 'inventory'), { recursive: true });
    mkdirSync(join(root, 'sql', 'assignment'), { recursive: true });
    const view = (n: number) =>
      `create or replace view inventory.node_status as\n  select name, case when age <= interval '${n} seconds' then 'here' end as state from inventory.node;\n`;
    writeFileSync(
      join(root, 'sql', 'inventory', '0007-old.sql'),
      view(150) + 'create function inventory.kept() returns int language sql as $$ select 1 $$;\n',
    );
    writeFileSync(join(root, 'sql', 'inventory', '0008-new.sql'), view(150));
    writeFileSync(
      join(root, 'sql', 'assignment', '0001-other.sql'),
      'create function assignment.kept() returns int language sql as $$ select 2 $$;\n',
    );
    const row = (file: string, find: string): Row => ({
      id: 'X.1',
      line: 2,
      invariant: 'X',
      file,
      find,
      replace: '',
      filters: ['x'],
      note: '',
    });
    assert.match(
      rowProblem(root, row('sql/inventory/0007-old.sql', "interval '150 seconds'"))!,
      /0008-new\.sql defines it again/,
    );
    assert.is(rowProblem(root, row('sql/inventory/0008-new.sql', "interval '150 seconds'")), null);
    // Another schema's function of the same short name is another function.
    assert.is(rowProblem(root, row('sql/inventory/0007-old.sql', 'select 1')), null);
    assert.match(rowProblem(root, row('sql/inventory/0007-old.sql', 'nowhere'))!, /occurs 0 times/);
    // A function a later migration drops and never defines again is text no database runs;
    // one dropped and made again in the same file is defined again there.
    writeFileSync(
      join(root, 'sql', 'inventory', '0007-gone.sql'),
      'create function inventory.gone() returns int language sql as $$ select 3 $$;\n' +
        'create function inventory.again() returns int language sql as $$ select 4 $$;\n',
    );
    writeFileSync(
      join(root, 'sql', 'inventory', '0009-drop.sql'),
      'drop function inventory.gone();\ndrop function if exists inventory.again();\n' +
        'create function inventory.again(n int) returns int language sql as $$ select n $$;\n',
    );
    assert.match(rowProblem(root, row('sql/inventory/0007-gone.sql', 'select 3'))!, /0009-drop\.sql drops it/);
    assert.match(rowProblem(root, row('sql/inventory/0007-gone.sql', 'select 4'))!, /0009-drop\.sql defines it again/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the definition holding a point is the last one begun before it', () => {
  const text = 'create view a.v as select 1;\ncreate or replace function b.f() returns int as $$ select 2 $$;';
  assert.is(definitionAt(text, text.indexOf('select 1')), 'a.v');
  assert.is(definitionAt(text, text.indexOf('select 2')), 'b.f');
  assert.is(definitionAt('-- before any statement\n' + text, 3), null);
  // A trigger made after a function is the trigger's statement, which no later function replaces.
  const trig =
    'create function a.f() returns trigger as $$ begin return null; end $$;\ncreate constraint trigger t after insert on a.x for each row execute function a.f();';
  assert.is(definitionAt(trig, trig.indexOf('for each row')), null);
  assert.is(definitionAt(trig, trig.indexOf('create constraint trigger')), null);
});

test('the header is required', () => {
  assert.throws(() => readRows('x\ty\n'), /header/);
  assert.is(readRows(`${HEADER}\n`).length, 0);
});

test.run();
