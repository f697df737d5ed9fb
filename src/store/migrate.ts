// Migrations, one folder a context: sql/<context>/NNNN-name.sql, applied by
// node-pg-migrate as the context's own role into the context's own schema.
//
// The runner is mostly refusals (M1). Each stops before anything runs, because
// at the moment any of them is true nobody knows what the database holds.
// The digest of every applied file is recorded by the same transaction that
// applies it (M2): the schema change and the row recording it commit together.
//
// The audit context is the exception to "as its own role": its owner,
// mesh_audit, may not log in (C3: an owner can turn off its own table's
// triggers), so its migrations run in a session of MESH_STORE_AUDIT_OWNER (the
// database superuser) that sets the role first. Everything they make is still
// mesh_audit's.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { CONTEXTS, type Context } from './contexts.js';
import { storeUrl, urlFromVariable } from './locate.js';
import { waitForStore } from './wait.js';
import { primaryUrl } from './hosts.js';
import { refuse } from '../sys/errors.js';
import type { Sql } from './connect.js';

export const SQL_ROOT = fileURLToPath(new URL('../../../sql/', import.meta.url));
const NAME = /^(\d{4})-([a-z0-9][a-z0-9-]*)\.sql$/;

interface File {
  name: string;
  number: number;
  path: string;
  text: string;
  digest: string;
}

/** Reads a context's folder and refuses what is misnamed, empty or duplicated. */
export function readMigrations(dir: string): File[] {
  const entries = statSync(dir, { throwIfNoEntry: false }) ? readdirSync(dir).filter((f) => !f.startsWith('.')) : [];
  const files: File[] = [];
  for (const name of entries.sort()) {
    const m = NAME.exec(name);
    const path = join(dir, name);
    if (!m) {
      throw refuse(
        'MSHE3',
        `${path} is misnamed`,
        'a migration is named NNNN-words.sql (four digits, a dash, lower-case words joined by dashes). Rename it',
      );
    }
    const text = readFileSync(path, 'utf8');
    const body = text
      .replace(/--[^\n]*/g, '')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .trim();
    if (body === '') {
      throw refuse('MSHE4', `${path} is empty`, 'a migration must change something. Write its SQL or delete the file');
    }
    files.push({
      name: name.slice(0, -4),
      number: Number(m[1]),
      path,
      text,
      digest: createHash('sha256').update(text).digest('hex'),
    });
  }
  const seen = new Map<number, File>();
  for (const f of files) {
    const other = seen.get(f.number);
    if (other) {
      throw refuse('MSHE5', `${f.path} and ${other.path} share the number ${String(f.number).padStart(4, '0')}`);
    }
    seen.set(f.number, f);
  }
  return files;
}

interface Applied {
  name: string;
  sha256: string;
}

/** What the database already holds, checked against the folder. Returns the files still to run. */
export function plan(ctx: string, files: File[], applied: Applied[]): File[] {
  const byName = new Map(files.map((f) => [f.name, f]));
  let highest = -1;
  for (const a of applied) {
    const f = byName.get(a.name);
    if (!f) {
      throw refuse('MSHE6', `${ctx}/${a.name}.sql has run but is no longer in the folder`);
    }
    if (f.digest !== a.sha256) {
      throw refuse('MSHE7', `${f.path} was edited after it ran`);
    }
    highest = Math.max(highest, f.number);
  }
  const done = new Set(applied.map((a) => a.name));
  const pending = files.filter((f) => !done.has(f.name));
  for (const f of pending) {
    if (f.number < highest) {
      throw refuse('MSHE8', `${f.path} is numbered below ${String(highest).padStart(4, '0')}, which has already run`);
    }
  }
  return pending;
}

const q = (ident: string) => `"${ident.replace(/"/g, '""')}"`;

async function appliedDigests(client: pg.Client, ctx: string): Promise<Applied[]> {
  await client.query(
    `create table if not exists ${q(ctx)}.migration_digest (
       name text primary key, sha256 text not null, applied_at timestamptz not null default now())`,
  );
  await client.query(
    `comment on table ${q(ctx)}.migration_digest is 'sha256 of each migration file as it ran; an edited file is refused (M1)'`,
  );
  return (await client.query<Applied>(`select name, sha256 from ${q(ctx)}.migration_digest order by name`)).rows;
}

/** The variable naming a session that may act as a context's owner, for a context whose owner no process logs in as. */
export const OWNER_VARIABLE: Partial<Record<Context, string>> = { audit: 'MESH_STORE_AUDIT_OWNER' };

/** A session of the context's owner: its own login, or (audit) a superuser's that sets the role. */
async function ownerSession(ctx: Context, env: NodeJS.ProcessEnv | undefined): Promise<pg.Client> {
  const variable = OWNER_VARIABLE[ctx];
  const listed = variable ? urlFromVariable(variable, env) : storeUrl(ctx, env);
  if (listed === undefined) {
    throw refuse(
      'MSH78',
      `${variable} is not set`,
      `mesh migrate runs the ${ctx} migrations as mesh_${ctx}, which no process logs in as: set ${variable} to the URL (or a 0600 file holding it) of a role that may SET ROLE mesh_${ctx}, the database superuser`,
    );
  }
  // node-pg-migrate (pg) takes one host: the list's primary, found now.
  const url = await waitForStore(listed, () => primaryUrl(listed));
  const client = await waitForStore(url, async () => {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    c.on('notice', () => {});
    try {
      await c.connect();
      return c;
    } catch (err) {
      await c.end().catch(() => {});
      throw err;
    }
  });
  if (variable) {
    const owner = `mesh_${ctx}`;
    const { rows } = await client.query<{ may: boolean }>(`select pg_has_role(session_user, $1, 'member') as may`, [
      owner,
    ]);
    if (!rows[0]?.may) {
      await client.end();
      throw refuse('MSH78', `${variable} logs in as a role that may not act as ${owner}`);
    }
    await client.query(`set role ${q(owner)}`);
  }
  return client;
}
export interface MigrateOptions {
  /** Folder holding one sub-folder per context. */
  root?: string;
  contexts?: readonly Context[];
  env?: NodeJS.ProcessEnv;
  say?: (line: string) => void;
}

export interface MigrateResult {
  context: Context;
  ran: string[];
}

export async function migrate(opts: MigrateOptions = {}): Promise<MigrateResult[]> {
  const root = opts.root ?? SQL_ROOT;
  const contexts = opts.contexts ?? CONTEXTS;
  const say = opts.say ?? (() => {});
  // Every context is checked before any runs: a refusal anywhere stops all.
  const plans: { ctx: Context; client: pg.Client; pending: File[] }[] = [];
  try {
    for (const ctx of contexts) {
      const client = await ownerSession(ctx, opts.env);
      plans.push({ ctx, client, pending: [] });
      const files = readMigrations(join(root, ctx));
      plans[plans.length - 1]!.pending = plan(ctx, files, await appliedDigests(client, ctx));
    }
    const results: MigrateResult[] = [];
    for (const { ctx, client, pending } of plans) {
      results.push({ context: ctx, ran: await runPending(ctx, client, root, pending, say) });
    }
    return results;
  } finally {
    await Promise.allSettled(plans.map((p) => p.client.end()));
  }
}

async function runPending(
  ctx: Context,
  client: pg.Client,
  root: string,
  pending: File[],
  say: (line: string) => void,
): Promise<string[]> {
  if (pending.length === 0) return [];
  const byPath = new Map(pending.map((f) => [f.path, f]));
  const ran = await runner({
    dbClient: client,
    dir: join(root, ctx),
    schema: ctx,
    migrationsSchema: ctx,
    migrationsTable: 'pgmigrations',
    direction: 'up',
    checkOrder: true,
    singleTransaction: true,
    createSchema: false,
    createMigrationsSchema: false,
    log: () => {},
    // Our loader, so the digest row rides in the migration's own transaction (M2).
    migrationLoaderStrategies: [
      {
        extensions: ['.sql'],
        loader: async (paths: string[]) =>
          paths.map((p) => {
            const f = byPath.get(p);
            const text = f?.text ?? readFileSync(p, 'utf8');
            return {
              id: p,
              filePaths: [p],
              actions: {
                up: (pgm: { sql(s: string): void }) => {
                  pgm.sql(text);
                  if (f)
                    pgm.sql(
                      `insert into ${q(ctx)}.migration_digest (name, sha256) values ('${f.name}', '${f.digest}')`,
                    );
                },
                down: false,
              },
            };
          }),
      },
    ],
  } as Parameters<typeof runner>[0]);
  for (const m of ran) say(`${ctx}: applied ${m.name}`);
  return ran.map((m) => m.name);
}

/**
 * The migrations of a context's folder its store has not run, read through the
 * context's own connection (its role owns migration_digest): for a readiness
 * check, which must not serve on a schema older than the code that reads it.
 */
export async function migrationsBehind(ctx: Context, sql: Sql, root = SQL_ROOT): Promise<string[]> {
  const ran = new Set(
    (await sql<{ name: string }[]>`select name from ${sql(`${ctx}.migration_digest`)}`).map((r) => r.name),
  );
  return readMigrations(join(root, ctx))
    .map((f) => f.name)
    .filter((n) => !ran.has(n));
}
