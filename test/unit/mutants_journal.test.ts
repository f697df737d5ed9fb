// The mutants' journal (test/mutants_journal.ts): a verdict is taken again
// only for the very tree and the very row it was reached on; an error runs
// again; a line cut short by a stop is skipped, not fatal. Pure: a temp dir.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, appendFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { treeDigest, readJournal, appendJournal, rowKey } from '../mutants_journal.js';
import type { Row } from '../mutation_rows.js';

const J = suite<{ dir: string }>('the mutants journal');
const row: Row = {
  id: 'D2.1',
  line: 9,
  invariant: 'D2',
  file: 'sql/a.sql',
  find: 'x > 1',
  replace: 'x >= 1',
  filters: ['sql/a'],
  note: 'n',
};

J.before((ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'mutants-journal-'));
  writeFileSync(join(ctx.dir, 'a.sql'), 'select 1;');
  writeFileSync(join(ctx.dir, 'b.ts'), 'export {};');
});
J.after((ctx) => {
  rmSync(ctx.dir, { recursive: true, force: true });
});

J('the tree digest follows every file and its bytes, whatever order they are listed in', (ctx) => {
  const t = treeDigest(ctx.dir, ['a.sql', 'b.ts']);
  assert.is(treeDigest(ctx.dir, ['b.ts', 'a.sql']), t);
  assert.is.not(treeDigest(ctx.dir, ['a.sql']), t, 'a file fewer');
  writeFileSync(join(ctx.dir, 'b.ts'), 'export {}; ');
  assert.is.not(treeDigest(ctx.dir, ['a.sql', 'b.ts']), t, 'one byte more');
});

J('a verdict is taken back for the same tree and row only; an error and a torn line run again', (ctx) => {
  const path = join(ctx.dir, 'journal');
  appendJournal(path, 'tree1', row, { verdict: 'killed', why: 'sql/a', seconds: 3 });
  appendJournal(path, 'tree2', { ...row, id: 'D2.2', find: 'y' }, { verdict: 'survived', why: '', seconds: 4 });
  appendJournal(path, 'tree1', { ...row, id: 'D2.3' }, { verdict: 'error', why: 'no server', seconds: 1 });
  appendFileSync(path, '{"tree":"tree1","row":"cut sh');
  const got = readJournal(path, 'tree1');
  assert.equal(
    [...got.values()].map((j) => j.id),
    ['D2.1'],
  );
  assert.is(got.get(rowKey(row))!.verdict, 'killed');
  assert.is(got.get(rowKey({ ...row, replace: 'x <= 1' })), undefined, 'a row whose edit changed runs again');
  assert.is(readJournal(path, 'tree3').size, 0, 'another tree takes nothing');
  assert.is(readJournal(join(ctx.dir, 'none'), 'tree1').size, 0, 'no journal yet');
});

J.run();
