// M1, M2, M3 and the context boundary, against a real PostgreSQL.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { run, runAny } from '../../src/sys/proc.js';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { migrate, plan } from '../../src/store/migrate.js';
import { MeshError } from '../../src/sys/errors.js';
import { waitLimit } from '../../src/store/wait.js';
import { emptyStore, freshStore, type Store } from '../harness/store.js';

const MESH = fileURLToPath(new URL('../../src/cli/mesh.js', import.meta.url));

/** A folder of migration sets: { inventory: { '0001-a.sql': 'create ...' } }. */
function folder(sets: Record<string, Record<string, string>>): string {
  const root = mkdtempSync(join(tmpdir(), 'mesh-mig-'));
  for (const [ctx, files] of Object.entries(sets)) {
    mkdirSync(join(root, ctx), { recursive: true });
    for (const [name, text] of Object.entries(files)) writeFileSync(join(root, ctx, name), text);
  }
  return root;
}

async function tables(store: Store): Promise<string[]> {
  const rows = await store.admin<
    { t: string }[]
  >`select table_name as t from information_schema.tables where table_schema = 'inventory' and table_name not in ('pgmigrations', 'migration_digest') order by 1`;
  return rows.map((r) => r.t);
}

async function digests(store: Store): Promise<string[]> {
  const rows = await store.admin<{ name: string }[]>`select name from inventory.migration_digest order by name`;
  return rows.map((r) => r.name);
}

const M1 = suite<{ store: Store }>('M1 migration refusals');
M1.before.each(async (ctx) => {
  ctx.store = await emptyStore();
});
M1.after.each(async (ctx) => {
  await ctx.store.drop();
});

async function refused(store: Store, root: string, match: RegExp, code: string): Promise<void> {
  const before = await tables(store);
  try {
    await migrate({ root, contexts: ['inventory'], env: store.env });
    assert.unreachable('the migration set should have been refused');
  } catch (err) {
    assert.instance(err, MeshError);
    assert.is((err as MeshError).code, code);
    assert.match((err as Error).message, match);
  }
  assert.equal(await tables(store), before, 'nothing ran');
}

M1('a first run applies, a second is already up to date', async ({ store }) => {
  const root = folder({ inventory: { '0001-a.sql': 'create table inventory.a (x int);' } });
  const first = await migrate({ root, contexts: ['inventory'], env: store.env });
  assert.equal(first[0]!.ran, ['0001-a']);
  const second = await migrate({ root, contexts: ['inventory'], env: store.env });
  assert.equal(second[0]!.ran, []);
  rmSync(root, { recursive: true });
});

M1('an edited migration that already ran is refused', async ({ store }) => {
  const root = folder({ inventory: { '0001-a.sql': 'create table inventory.a (x int);' } });
  await migrate({ root, contexts: ['inventory'], env: store.env });
  writeFileSync(join(root, 'inventory', '0001-a.sql'), 'create table inventory.a (x int, y int);');
  writeFileSync(join(root, 'inventory', '0002-b.sql'), 'create table inventory.b (x int);');
  await refused(store, root, /0001-a\.sql was edited after it ran.*new migration/, 'MSHE7');
});

M1('a migration numbered below one that ran is refused', async ({ store }) => {
  const root = folder({ inventory: { '0002-b.sql': 'create table inventory.b (x int);' } });
  await migrate({ root, contexts: ['inventory'], env: store.env });
  writeFileSync(join(root, 'inventory', '0001-a.sql'), 'create table inventory.a (x int);');
  await refused(store, root, /0001-a\.sql is numbered below 0002.*renumber/, 'MSHE8');
});

M1('a migration that ran and is gone from the folder is refused (MSHE6)', () => {
  assert.throws(
    () => plan('inventory', [], [{ name: '0001-a', sha256: 'x' }]),
    (e: MeshError) => e.code === 'MSHE6' && /0001-a\.sql has run but is no longer in the folder/.test(e.message),
  );
});

M1('duplicate numbers are refused', async ({ store }) => {
  const root = folder({
    inventory: { '0001-a.sql': 'create table inventory.a (x int);', '0001-b.sql': 'create table inventory.b (x int);' },
  });
  await refused(store, root, /share the number 0001/, 'MSHE5');
});

M1('a misnamed file is refused', async ({ store }) => {
  const root = folder({
    inventory: {
      '0001-a.sql': 'create table inventory.a (x int);',
      '2-Things.sql': 'create table inventory.b (x int);',
    },
  });
  await refused(store, root, /2-Things\.sql is misnamed.*Rename/, 'MSHE3');
});

M1('an empty file is refused, comments alone count as empty', async ({ store }) => {
  const root = folder({
    inventory: { '0001-a.sql': 'create table inventory.a (x int);', '0002-b.sql': '-- nothing yet\n\n' },
  });
  await refused(store, root, /0002-b\.sql is empty/, 'MSHE4');
});

M1('a refusal in one context stops every context before anything runs', async ({ store }) => {
  const root = folder({
    inventory: { '0001-a.sql': 'create table inventory.a (x int);' },
    overlay: { '0001-a.sql': '' },
  });
  try {
    await migrate({ root, contexts: ['inventory', 'overlay'], env: store.env });
    assert.unreachable();
  } catch (err) {
    assert.is((err as MeshError).code, 'MSHE4');
  }
  assert.equal(await tables(store), []);
});

M1.run();

const M2 = suite<{ store: Store }>('M2 the schema change and its record commit together');
M2.before.each(async (ctx) => {
  ctx.store = await emptyStore();
});
M2.after.each(async (ctx) => {
  await ctx.store.drop();
});

M2('when recording the migration fails, its schema change is rolled back', async ({ store }) => {
  const root = folder({ inventory: { '0001-a.sql': 'create table inventory.a (x int);' } });
  // Make the record fail: a row for 0001-a is already there (with a digest the
  // plan will not look at, because we insert it after planning via a trigger).
  await migrate({ root: folder({ inventory: {} }), contexts: ['inventory'], env: store.env });
  await store.admin.unsafe(`
    create function inventory.refuse_record() returns trigger language plpgsql as $$
    begin raise exception 'recording refused'; end $$;
    create trigger refuse_record before insert on inventory.migration_digest for each row execute function inventory.refuse_record();`);
  try {
    await migrate({ root, contexts: ['inventory'], env: store.env });
    assert.unreachable('the failing record should fail the migration');
  } catch (err) {
    assert.match(String((err as Error).message) + String((err as Error).cause ?? ''), /recording refused|Error/);
  }
  assert.equal(await tables(store), [], 'table a must not exist without its record');
  assert.equal(await digests(store), []);
});

M2('a failing migration leaves neither its change nor a record', async ({ store }) => {
  const root = folder({ inventory: { '0001-a.sql': 'create table inventory.a (x int); select 1/0;' } });
  try {
    await migrate({ root, contexts: ['inventory'], env: store.env });
    assert.unreachable();
  } catch {
    /* expected */
  }
  assert.equal(await tables(store), []);
  assert.equal(await digests(store), []);
});

M2.run();

const Boundary = suite<{ store: Store }>('contexts: a role reads only its own schema and what is granted to it');
Boundary.before(async (ctx) => {
  ctx.store = await freshStore();
});
Boundary.after(async (ctx) => {
  await ctx.store.drop();
});

Boundary('the overlay role cannot read inventory tables', async ({ store }) => {
  const overlay = postgres(store.url('overlay'), { max: 1, onnotice: () => {} });
  try {
    await overlay`select * from inventory.token`;
    assert.unreachable('overlay read inventory.token');
  } catch (err) {
    assert.is((err as { code?: string }).code, '42501', 'permission denied');
  } finally {
    await overlay.end();
  }
  const inventory = postgres(store.url('inventory'), { max: 1, onnotice: () => {} });
  try {
    const rows = await inventory`select count(*)::int as n from inventory.token`;
    assert.is(rows[0]!.n, 0, 'its owner can');
  } finally {
    await inventory.end();
  }
});

Boundary.run();

const M3 = suite('M3 the store waits for a cold database, then gives up clearly');

M3('mesh migrate against a database nobody runs says what it waits for and gives up after the limit', async () => {
  const env = {
    ...process.env,
    MESH_STORE_WAIT_SECONDS: '2',
    ...Object.fromEntries(
      ['INVENTORY', 'CATALOGUE', 'ASSIGNMENT', 'SECRET', 'PROVISION', 'OVERLAY'].map((c) => [
        `MESH_STORE_${c}`,
        `postgres://mesh_x@127.0.0.1:9/mesh`,
      ]),
    ),
  };
  const started = Date.now();
  const { code, stderr } = await runAny(process.execPath, [MESH, 'migrate'], { env });
  assert.is.not(code, 0);
  assert.match(stderr, /waiting for the database at 127\.0\.0\.1:9\/mesh \(ECONNREFUSED\)/);
  assert.match(stderr, /did not answer within 2s.*start PostgreSQL/);
  assert.ok(Date.now() - started >= 2000, 'it waited');
});

M3('the wait is three minutes unless MESH_STORE_WAIT_SECONDS says otherwise', () => {
  // A cold first node took over a minute for initdb: one minute was a flake a second run always fixed.
  assert.is(waitLimit({}), 180);
  assert.is(waitLimit({ MESH_STORE_WAIT_SECONDS: '' }), 180);
  assert.is(waitLimit({ MESH_STORE_WAIT_SECONDS: '2' }), 2);
});

M3('mesh migrate --help teaches', async () => {
  const out = await run(process.execPath, [MESH, 'migrate', '--help']);
  assert.match(out, /Refuses, before anything runs/);
  assert.match(out, /MESH_STORE_<CONTEXT>/);
});

M3.run();

const Owner = suite<{ store: Store }>('C3: the audit context migrates as an owner nobody logs in as');
Owner.before.each(async (ctx) => {
  ctx.store = await emptyStore();
});
Owner.after.each(async (ctx) => {
  await ctx.store.drop();
});

Owner('mesh migrate without a way to act as mesh_audit is refused before anything runs (MSH78)', async (ctx) => {
  const root = folder({ inventory: { '0001-a.sql': 'create table inventory.a (x int);' }, audit: {} });
  try {
    const without = { ...ctx.store.env, MESH_STORE_AUDIT_OWNER: '' };
    const e = await migrate({ root, env: without, contexts: ['inventory', 'audit'] }).catch((err: unknown) => err);
    assert.instance(e, MeshError);
    assert.is((e as MeshError).code, 'MSH78');
    assert.match((e as Error).message, /MESH_STORE_AUDIT_OWNER is not set/);
    // A role that may not act as the owner is refused too: the context roles, the reader.
    for (const role of ['mesh_inventory', 'mesh_audit_reader']) {
      const as = {
        ...ctx.store.env,
        MESH_STORE_AUDIT_OWNER: ctx.store.url('inventory').replace('mesh_inventory@', `${role}@`),
      };
      const r = await migrate({ root, env: as, contexts: ['inventory', 'audit'] }).catch((err: unknown) => err);
      assert.is((r as MeshError).code, 'MSH78', role);
      assert.match((r as Error).message, new RegExp(`logs in as a role that may not act as mesh_audit`));
    }
    assert.equal(await tables(ctx.store), [], 'nothing ran');
    // Through the superuser, what it makes is the owner's.
    await migrate({
      root: folder({ audit: { '0001-a.sql': 'create table audit.a (x int);' } }),
      env: ctx.store.env,
      contexts: ['audit'],
    });
    const [t] = await ctx.store.admin`select tableowner from pg_tables where schemaname = 'audit' and tablename = 'a'`;
    assert.is(t!.tableowner, 'mesh_audit');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

Owner.run();
