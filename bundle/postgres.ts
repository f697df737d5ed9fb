// The store on the first node: a cluster of its own under the state folder
// (never the system's), a database `mesh`, a schema and a role per context
// (sql/create_contexts.sql), each role's password in a 0600 file holding its
// URL (what MESH_STORE_<CONTEXT> points at), then the migrations.
//
// The socket folder belongs to postgres, mode 0700: only root and postgres
// reach it, so local connections are trusted and everything over TCP
// (127.0.0.1 only) needs a password.
import { chownSync, existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { CONTEXTS, storeRole } from '../src/store/contexts.js';
import { SQL_ROOT, migrate, OWNER_VARIABLE } from '../src/store/migrate.js';
import { waitForStore } from '../src/store/wait.js';
import { pgBin } from '../src/store/promote.js';
import { writeAtomic } from '../src/sys/atomic.js';
import { run as exec } from '../src/sys/proc.js';
import type { Spec } from './units.js';
import { paths, controlEnv, type Options } from './layout.js';

export const DB = 'mesh';

// One lookup of the server binaries, the store's (mesh store promote uses it too).
export { pgBin };

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  return {
    uid: Number((await exec('id', ['-u', 'postgres'])).trim()),
    gid: Number((await exec('id', ['-g', 'postgres'])).trim()),
  };
}

/** initdb once; true when it ran. */
export async function ensureCluster(o: Options): Promise<boolean> {
  const p = paths(o);
  if (existsSync(join(p.pgData, 'PG_VERSION'))) return false;
  const { uid, gid } = await postgresIds();
  for (const d of [p.pgData, p.pgSock]) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    chownSync(d, uid, gid);
  }
  await exec('runuser', [
    '-u',
    'postgres',
    '--',
    pgBin('initdb'),
    '-D',
    p.pgData,
    '-U',
    'postgres',
    '-E',
    'UTF8',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '--no-instructions',
  ]);
  return true;
}

export function postgresSpec(o: Options): Spec {
  const p = paths(o);
  return {
    name: 'mesh-postgres',
    description: 'mesh store (PostgreSQL, loopback only)',
    user: 'postgres',
    profile: 'service',
    killSignal: 'SIGINT',
    after: ['mesh-nftables'],
    exec: [
      pgBin('postgres'),
      '-D',
      p.pgData,
      '-p',
      String(o.ports.pg),
      '-k',
      p.pgSock,
      '-c',
      `listen_addresses=${['127.0.0.1', ...(o.pgListen ?? [])].join(',')}`,
      // The mesh's queries touch a handful of rows, but set-returning functions
      // make the planner guess millions, and JIT then compiles for seconds
      // a query that runs in milliseconds without it.
      '-c',
      'jit=off',
    ],
  };
}

/** A superuser connection over the socket, once the cluster answers (M3: up to 3 minutes). */
export async function superuser(o: Options, db = 'postgres'): Promise<postgres.Sql> {
  const p = paths(o);
  const sql = postgres({
    path: join(p.pgSock, `.s.PGSQL.${o.ports.pg}`),
    user: 'postgres',
    database: db,
    max: 1,
    onnotice: () => {},
    connect_timeout: 10,
  });
  await waitForStore(
    `postgres://postgres@localhost:${o.ports.pg}/${db}`,
    () => sql`select 1`,
    (l) => console.log(`  ${l}`),
  );
  return sql;
}

/** The database, the contexts' schemas and roles, a password per role in its URL file. Returns what changed. */
export async function ensureContexts(o: Options): Promise<string[]> {
  const p = paths(o);
  const changed: string[] = [];
  const root = await superuser(o);
  try {
    const [{ n }] = (await root`select count(*)::int as n from pg_database where datname = ${DB}`) as unknown as [
      { n: number },
    ];
    if (n === 0) {
      await root.unsafe(`create database "${DB}"`);
      changed.push(`database ${DB}`);
    }
  } finally {
    await root.end();
  }
  const sql = await superuser(o, DB);
  try {
    const count = async () =>
      (
        await sql`select (select count(*) from pg_roles where rolname = any(${CONTEXTS.map((c) => `mesh_${c}`)}))
                                              + (select count(*) from pg_namespace where nspname = any(${[...CONTEXTS]})) as n`
      )[0]!.n;
    const before = Number(await count());
    await sql.unsafe(readFileSync(join(SQL_ROOT, 'create_contexts.sql'), 'utf8'));
    if (Number(await count()) !== before) changed.push('context schemas and roles');
    mkdirSync(p.store, { recursive: true, mode: 0o700 });
    for (const ctx of CONTEXTS) {
      const file = p.storeFile(ctx);
      // Each URL logs in as its context's login role (the audit one as its reader, C3): a file
      // naming another role (the audit owner, which may no longer log in) is made again.
      const role = storeRole(ctx);
      if (statSync(file, { throwIfNoEntry: false }) && readFileSync(file, 'utf8').startsWith(`postgres://${role}:`))
        continue;
      // Set first, written second: a crash between them makes a new one next run.
      const password = randomBytes(24).toString('base64url');
      await sql.unsafe(`alter role "${role}" password '${password}'`);
      await writeAtomic(file, `postgres://${role}:${password}@127.0.0.1:${o.ports.pg}/${DB}\n`, 0o600);
      changed.push(`password of ${role}`);
    }
  } finally {
    await sql.end();
  }
  return changed;
}

/**
 * `mesh migrate`, as every context's own role; the audit context as its owner,
 * which no process logs in as, through the superuser over the socket (C3). That
 * URL is handed to this step alone, never to a daemon.
 */
export async function migrateStore(o: Options): Promise<string[]> {
  const p = paths(o);
  const owner = `postgres://postgres@localhost:${o.ports.pg}/${DB}?host=${encodeURIComponent(p.pgSock)}`;
  const env = { ...controlEnv(o), [OWNER_VARIABLE.audit!]: owner };
  const results = await migrate({ env, say: (l) => console.log(`  ${l}`) });
  return results.flatMap((r) => r.ran.map((n) => `${r.context}/${n}`));
}
