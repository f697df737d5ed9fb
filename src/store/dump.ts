// The store's half of `mesh backup` and `mesh restore` (src/cli/backup.ts):
// one consistent dump of the whole database, and that dump made the store
// again. Both need the database superuser (a dump of every schema, each
// schema made again with its owner): the session mesh migrate uses to act as
// the history's owner (MESH_STORE_AUDIT_OWNER), handed to these alone.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import { run } from '../sys/proc.js';
import { refuse } from '../sys/errors.js';
import { urlFromVariable } from './locate.js';
import { primaryUrl, parseStoreUrl } from './hosts.js';
import { pgBin } from './promote.js';
import { CONTEXTS } from './contexts.js';

/** The superuser session: its URL without a password, and pg_dump's and psql's environment with the password in a 0600 passfile in DIR. */
async function superuser(dir: string): Promise<{ url: string; env: NodeJS.ProcessEnv }> {
  const { OWNER_VARIABLE } = await import('./migrate.js');
  const variable = OWNER_VARIABLE.audit!;
  const listed = urlFromVariable(variable);
  if (listed === undefined)
    throw refuse(
      'MSHR4',
      `${variable} is not set`,
      `backup and restore read and make every context's schema: set ${variable} to the URL (or a 0600 file holding it) of the database superuser`,
    );
  const url = await primaryUrl(listed);
  const password = parseStoreUrl(url).password;
  if (!password) return { url, env: { ...process.env, PGPASSFILE: '/dev/null' } };
  // The password reaches pg_dump and psql in a 0600 passfile, never on their argv or in their environment.
  const bare = new URL(url.replace(/^postgresql:/, 'postgres:'));
  bare.password = '';
  const f = join(dir, '.pgpass');
  writeFileSync(f, `*:*:*:*:${password.replace(/\\/g, '\\\\').replace(/:/g, '\\:')}\n`, { mode: 0o600 });
  return { url: bare.toString(), env: { ...process.env, PGPASSFILE: f } };
}

/**
 * The whole database into FILE (plain SQL), as one serializable-deferrable
 * snapshot: every context's schema and rows, the history and its chain, the
 * grants, the event trigger guarding the history, all of one moment. DIR is a
 * 0700 scratch folder for the passfile. Returns pg_dump's version.
 */
export async function dumpStore(file: string, dir: string): Promise<string> {
  const su = await superuser(dir);
  const dump = pgBin('pg_dump');
  await run(dump, ['--no-password', '--serializable-deferrable', '--format=plain', `--file=${file}`, su.url], {
    env: su.env,
    timeoutMs: 3_600_000,
  });
  return (await run(dump, ['--version'])).trim();
}

/** Does the store hold a mesh: any node enrolled (a fresh install's store has none)? */
async function holdsAMesh(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const [r] = await sql`select to_regclass('inventory.node') is not null as has`;
    if (!r?.has) return false;
    const [n] = await sql`select exists (select 1 from inventory.node) as any`;
    return Boolean(n?.any);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * The store made again from FILE (a dumpStore), in one transaction: every
 * context's schema dropped and made again with its rows, owners and grants,
 * so a failure part way leaves the store as it was. A store that holds a mesh
 * is refused (MSHR3) unless FORCE. Then migrated: a backup of an older mesh
 * comes up to this one's schema. Returns the migrations that ran.
 */
export async function restoreStore(file: string, dir: string, force = false): Promise<string[]> {
  const su = await superuser(dir);
  if (!force && (await holdsAMesh(su.url)))
    throw refuse(
      'MSHR3',
      'the store already holds a mesh (enrolled nodes): restoring would replace it',
      'restore onto a freshly installed first node, or add --force to replace this store with the backup',
    );
  const script = join(dir, 'restore.sql');
  const schemas = CONTEXTS.map((c) => `"${c}"`).join(', ');
  writeFileSync(
    script,
    `drop event trigger if exists mesh_audit_guard;\ndrop schema if exists ${schemas} cascade;\n\\i ${file}\n`,
    { mode: 0o600 },
  );
  await run(
    pgBin('psql'),
    [
      '--no-psqlrc',
      '--quiet',
      '--no-password',
      '--single-transaction',
      '--set=ON_ERROR_STOP=1',
      `--file=${script}`,
      su.url,
    ],
    { env: su.env, timeoutMs: 3_600_000 },
  );
  const { migrate } = await import('./migrate.js');
  const ran = await migrate({ say: (l) => process.stderr.write(l + '\n') });
  return ran.flatMap((r) => r.ran.map((n) => `${r.context}/${n}`));
}
