// The generated mutants (test/mutants_generated.ts) on a small tree of their
// own: a raise is taken from a function's newest definition only (never from
// one a later migration drops), a guard's conditions and comparisons are found
// in code and never in a comment or a string, a code no runnable test names is
// reported by name and not run, a refusal kept as a value is said to be
// skipped, and every mutant's find string occurs once in its file and its
// replace changes it.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { generate, whereChains, maskSql } from '../mutants_generated.js';
import { rowProblem } from '../mutation_rows.js';
import { REGISTER } from '../../src/sys/errors.js';
import { CONTEXTS } from '../../src/store/contexts.js';

const G = suite('generated mutants');

const FIXTURE: Record<string, string> = {
  'sql/inventory/0001-things.sql': `create table inventory.thing (hash text, spent_at timestamptz, expires_at timestamptz);
create function inventory.spend_thing(h text) returns boolean language plpgsql as $$
begin
  raise exception 'an old raise' using errcode = 'MSH01';
end $$;
create function inventory.count_things() returns integer language sql as $$
  select count(*)::int from inventory.thing where expires_at > now()
$$;
create function inventory.spend_gone(h text) returns boolean language plpgsql as $$
begin
  raise exception 'a raise no database runs once migrated' using errcode = 'MSH01';
end $$;
`,
  'sql/inventory/0002-spend-once.sql': `-- a comment that says where x > 1 and y < 2
drop function inventory.spend_gone(text);
create or replace function inventory.spend_thing(h text) returns boolean language plpgsql as $$
begin
  if h is null then
    raise exception 'no thing where % > 0', h using errcode = 'MSH01', hint = 'give one';
  end if;
  perform inventory.count_things(what => 'x <> y');
  update inventory.thing set spent_at = now()
   where hash = h and spent_at is null and expires_at > now() and hash <> '';
  return found;
end $$;
`,
  'src/thing.ts': `import { refuse } from './store/errors.js';
export function check(bad: boolean, worse: boolean) {
  // refuse('MSH03', 'in a comment') raises nothing
  if (bad) throw refuse('MSH02', 'bad');
  const kept = refuse('MSH05', 'kept as a value');
  if (worse) return refuse('MSH04', 'worse');
  return kept;
}
`,
  'src/wire_thing.ts': `import { WireError } from './wire/envelope.js';
export function parse(v: unknown) {
  if (typeof v !== 'string') throw new WireError('malformed', 'not a thing');
  return v;
}
`,
  'test/things/spend.test.ts': `// asserts MSH01 of spend_thing, and MSH05\n`,
  'test/things/parse.test.ts': `// asserts fault 'malformed', never its code\n`,
  'test/unit/parse.test.ts': `// asserts fault 'malformed' without servers: the cheapest, so run first\n`,
  'test/machine/booted.test.ts': `// asserts MSH02 on a booted machine\n`,
  'test/things/helpers.ts': `// names MSH04, but is no test file\n`,
};

function fixture(): string {
  const root = mkdtempSync(join(tmpdir(), 'mesh-generated-'));
  for (const [f, text] of Object.entries(FIXTURE)) {
    mkdirSync(dirname(join(root, f)), { recursive: true });
    writeFileSync(join(root, f), text);
  }
  return root;
}

G('from a small tree: raises of the newest definitions, guards in code only, untested codes by name', () => {
  const root = fixture();
  try {
    const g = generate(root, {
      codes: ['MSH01', 'MSH02', 'MSH04', 'MSH05', 'MSH09', 'MSHN0'],
      contexts: ['inventory'],
    });
    const ids = g.rows.map((r) => `${r.id} ${r.note.replace(/^\S+: /, '')}`);
    assert.equal(ids, [
      'raise:MSH01.1 inventory.spend_thing raises MSH01',
      'raise:MSHN0.1 throw new WireError(malformed) made unreachable',
      'guard:inventory.spend_thing.1 condition hash = h dropped',
      'guard:inventory.spend_thing.2 condition spent_at is null dropped',
      'guard:inventory.spend_thing.3 condition expires_at > now() dropped',
      "guard:inventory.spend_thing.4 condition hash <> '' dropped",
      "guard:inventory.spend_thing.5 > turned to >= in: where hash = h and spent_at is null and expires_at > now() and hash <> '';",
    ]);
    for (const r of g.rows) {
      // A guard runs the files naming its function and those named for what it acts on (spend_thing: thing).
      const by = r.id.startsWith('raise:MSHN0')
        ? ['unit/parse.test', 'things/parse.test']
        : r.id.startsWith('guard:')
          ? ['things/spend.test', 'things/parse.test']
          : ['things/spend.test'];
      assert.equal(
        r.filters,
        by,
        `${r.id} runs the test files that name its code, or a WireError's fault, unit/ first`,
      );
      assert.is(rowProblem(root, r), null, `${r.id} applies`);
      assert.is.not(r.replace, r.find, `${r.id} changes the text`);
    }
    const raise = g.rows[0]!;
    assert.is(raise.file, 'sql/inventory/0002-spend-once.sql', 'the newest definition, never the one it replaced');
    assert.match(raise.replace, /^\s+null;$/);
    const second = g.rows.find((r) => r.id === 'guard:inventory.spend_thing.2')!;
    const text = readFileSync(join(root, second.file), 'utf8');
    assert.match(text.replace(second.find, second.replace), /where hash = h and expires_at > now\(\) and hash <> ''/);
    assert.equal(g.untested, ['MSH02 (named only in machine/booted.test.ts, not run here)', 'MSH04']);
    assert.equal(g.unraised, ['MSH05', 'MSH09']);
    assert.equal(g.skipped, ["src/thing.ts:5: refuse('MSH05') is a value here, not thrown or returned"]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

G('a where chain stops at its clause: parentheses, case, between and the next keyword', () => {
  const sql = `update t set a = 1 where x = (select 1 where y and z) and case when p and q then true end
   and n between 1 and 5 returning a; select 1 where k > 2 order by 1; select count(*) filter (where f and g) from t`;
  const m = maskSql(sql);
  const chains = whereChains(m).map((c) => c.map(([s, e]) => sql.slice(s, e)));
  assert.equal(chains, [
    ['x = (select 1 where y and z)', 'case when p and q then true end', 'n between 1 and 5'],
    ['y', 'z'],
    ['k > 2'],
    ['f', 'g'],
  ]);
});

G(
  "the tree's own generated mutants all apply, and every code the register lists is generated, untested or skipped",
  () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    const g = generate(root, { codes: REGISTER.map((c) => c.code), contexts: CONTEXTS });
    assert.ok(g.rows.length > 200, `${g.rows.length} mutants`);
    assert.equal(g.rows.map((r) => rowProblem(root, r)).filter(Boolean), []);
    const ids = g.rows.map((r) => r.id);
    assert.is(new Set(ids).size, ids.length, 'ids are unique');
    const seen = new Set([...g.rows.map((r) => r.subject), ...g.untested.map((u) => u.split(' ')[0]!), ...g.unraised]);
    assert.equal(
      REGISTER.map((c) => c.code).filter((c) => !seen.has(c)),
      [],
    );
  },
);

G.run();
