// A fresh database per suite. The run migrates one template database once;
// each suite clones it (graphile-worker's habit), so a suite starts from the
// real schema in milliseconds and no suite sees another's rows.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { CONTEXTS, storeVariable, storeRole, readerRole, type Context } from '../../src/store/contexts.js';
import { CONSOLE_CONTEXTS } from '../../src/console/contexts.js';
import { migrate, SQL_ROOT, OWNER_VARIABLE } from '../../src/store/migrate.js';
import { servers, type Servers } from './servers.js';
import { leave, suiteDir } from './leftovers.js';

type Admin = postgres.Sql;

export function storeEnv(port: number, db: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const ctx of CONTEXTS) env[storeVariable(ctx)] = `postgres://${storeRole(ctx)}@127.0.0.1:${port}/${db}`;
  // mesh migrate acts as the history's owner through the superuser, as the bundle does (C3).
  env[OWNER_VARIABLE.audit!] = `postgres://postgres@127.0.0.1:${port}/${db}`;
  return env;
}

/** MESH_STORE_* of the console's contexts as the console is handed them: each as its reader (P1). */
export function consoleEnv(port: number, db: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const ctx of CONSOLE_CONTEXTS) env[storeVariable(ctx)] = `postgres://${readerRole(ctx)}@127.0.0.1:${port}/${db}`;
  return env;
}

async function createContexts(admin: Admin, port: number, db: string): Promise<void> {
  await admin.unsafe(`create database "${db}"`);
  const one = postgres(`postgres://postgres@127.0.0.1:${port}/${db}`, { max: 1, onnotice: () => {} });
  try {
    await one.unsafe(readFileSync(join(SQL_ROOT, 'create_contexts.sql'), 'utf8'));
  } finally {
    await one.end();
  }
}

export async function prepareTemplate(admin: Admin, pg: { port: number }): Promise<string> {
  const db = 'mesh_template';
  await createContexts(admin, pg.port, db);
  await migrate({ env: storeEnv(pg.port, db), say: () => {} });
  await admin.unsafe(`alter database "${db}" with is_template true`);
  return db;
}

export interface Store {
  db: string;
  /** MESH_STORE_* for every context, to hand to code and child processes. */
  env: NodeJS.ProcessEnv;
  /** The console's contexts as it is handed them, each as its reader: env with these over it is the console's. */
  consoleEnv: NodeJS.ProcessEnv;
  /** A superuser connection to this database, for assertions a DBA would make. */
  admin: Admin;
  /** The URL a context's code is handed (its login role: mesh_audit_reader for audit). */
  url(ctx: string): string;
  drop(): Promise<void>;
}

async function open(db: string, srv: Servers): Promise<Store> {
  const { pg } = srv;
  // Named at creation: a suite killed mid-way never reaches its drop.
  leave({ kind: 'database', name: db, port: pg.port });
  const admin = postgres(`postgres://postgres@127.0.0.1:${pg.port}/${db}`, { max: 2, onnotice: () => {} });
  return {
    db,
    env: storeEnv(pg.port, db),
    consoleEnv: consoleEnv(pg.port, db),
    admin,
    url: (ctx) => `postgres://${storeRole(ctx as Context)}@127.0.0.1:${pg.port}/${db}`,
    async drop() {
      await admin.end({ timeout: 5 });
      if (suiteDir()) return; // the run drops it once the suite passed, and keeps it when it failed
      const root = postgres(`postgres://postgres@127.0.0.1:${pg.port}/postgres`, { max: 1, onnotice: () => {} });
      try {
        await root.unsafe(`drop database if exists "${db}" with (force)`);
      } finally {
        await root.end();
      }
    },
  };
}

function name(prefix: string): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** A database cloned from the migrated template. */
export async function freshStore(srv: Servers = servers()): Promise<Store> {
  const { pg, template } = srv;
  const db = name('t');
  const root = postgres(`postgres://postgres@127.0.0.1:${pg.port}/postgres`, { max: 1, onnotice: () => {} });
  try {
    await root.unsafe(`create database "${db}" template "${template}"`);
  } finally {
    await root.end();
  }
  return open(db, srv);
}

/** A database with the context schemas and roles but no migration run. */
export async function emptyStore(srv: Servers = servers()): Promise<Store> {
  const { pg } = srv;
  const db = name('e');
  const root = postgres(`postgres://postgres@127.0.0.1:${pg.port}/postgres`, { max: 1, onnotice: () => {} });
  try {
    await createContexts(root, pg.port, db);
  } finally {
    await root.end();
  }
  return open(db, srv);
}

/** A fresh store and one connection to it as CONTEXT's own role (the way serve calls it), for suites of one context's SQL. */
export interface RoleCtx {
  store: Store;
  sql: postgres.Sql;
}

/** Fills CTX step by step, so closeRole ends what was opened even when a step failed. */
export async function openRole(ctx: RoleCtx, context: Context): Promise<void> {
  ctx.store = await freshStore();
  ctx.sql = postgres(ctx.store.url(context), { max: 1, onnotice: () => {} });
}

export async function closeRole(ctx: Partial<RoleCtx>): Promise<void> {
  await ctx.sql?.end();
  await ctx.store?.drop();
}
