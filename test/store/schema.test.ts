// The schema, as migrate leaves it, is checked in (test/schema.sql) so that a
// change to it shows in review as a diff (graphile-worker's __tests__/schema.sql).
// This migrates an empty database and compares its dump with the file.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { execFile } from 'node:child_process';
import { migrate } from '../../src/store/migrate.js';
import { emptyStore, type Store } from '../harness/store.js';
import { pgDump, normaliseSchema } from './dump.js';

const FILE = fileURLToPath(new URL('../../../test/schema.sql', import.meta.url));
const REGENERATE = 'MESH_SCHEMA_WRITE=1 npm test -- store/schema';

const S = suite<{ store: Store }>('the schema dump');
S.before(async (ctx) => {
  ctx.store = await emptyStore();
});
S.after(async (ctx) => {
  await ctx.store?.drop();
});

function diff(got: string): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-schema-'));
  writeFileSync(join(dir, 'got.sql'), got);
  return new Promise((resolve) =>
    execFile('diff', ['-u', FILE, join(dir, 'got.sql')], { maxBuffer: 16 << 20 }, (_e, out) => {
      rmSync(dir, { recursive: true, force: true });
      resolve(String(out).split('\n').slice(0, 80).join('\n'));
    }),
  );
}

S('the migrated schema is the one checked in as test/schema.sql', async ({ store }) => {
  await migrate({ env: store.env, say: () => {} });
  const got = normaliseSchema(await pgDump(store.db, ['--schema-only']));
  if (process.env.MESH_SCHEMA_WRITE === '1') {
    writeFileSync(FILE, got);
    console.log(`wrote ${FILE}: commit it with the migration that changed it`);
    return;
  }
  assert.ok(existsSync(FILE), `test/schema.sql is missing: make it with ${REGENERATE}`);
  const want = readFileSync(FILE, 'utf8');
  if (got !== want) {
    assert.unreachable(
      `the migrated schema differs from test/schema.sql. If the change is meant, regenerate it with ${REGENERATE} and commit it with the migration.\n${await diff(got)}`,
    );
  }
});

S(
  'no function that runs as its owner may be called by everyone: each grants execute to whom it serves',
  async ({ store }) => {
    // A security-definer function runs with its owner's rights; left to PUBLIC (PostgreSQL's default),
    // any role that can see the schema (a context's reader, the console) calls it. Triggers cannot be called.
    const open = await store.admin<{ fn: string }[]>`
    select p.oid::regprocedure::text as fn
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
     where n.nspname in ('inventory', 'catalogue', 'secret', 'provision', 'overlay', 'assignment', 'audit')
       and p.prosecdef and p.prorettype not in ('trigger'::regtype, 'event_trigger'::regtype)
       and has_function_privilege('public', p.oid, 'execute')
     order by 1`;
    assert.equal(
      open.map((r) => r.fn),
      [],
      'revoke execute on each from public in the migration that defines it, and grant it to the roles that call it',
    );
  },
);

S('every view a role may read runs for it: the functions it calls are granted with it', async ({ store }) => {
  // PostgreSQL checks a view's function calls against the reader, so a view granted without them fails only when read.
  const pairs = await store.admin<{ role: string; view: string }[]>`
    select r.rolname as role, format('%I.%I', n.nspname, c.relname) as view
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      cross join pg_roles r
     where c.relkind in ('v', 'm')
       and n.nspname in ('inventory', 'catalogue', 'secret', 'provision', 'overlay', 'assignment', 'audit')
       and r.rolname like 'mesh\\_%' and has_table_privilege(r.oid, c.oid, 'select')
     order by 1, 2`;
  assert.ok(pairs.length > 0);
  const refused: string[] = [];
  for (const { role, view } of pairs) {
    try {
      await store.admin.begin(async (tx) => {
        await tx.unsafe(`set local role ${role}`);
        await tx.unsafe(`explain select * from ${view}`);
      });
    } catch (err) {
      refused.push(`${role} on ${view}: ${(err as Error).message}`);
    }
  }
  assert.equal(refused, [], 'grant execute on the function to the role, in the migration that grants the view');
});

S.run();
