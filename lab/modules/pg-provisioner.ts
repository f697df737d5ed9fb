// Example provider module: makes every consumer's role and database on a real
// PostgreSQL from the directory the mesh wrote (<root>/provides/<provision>/,
// one CONSUMER.binds and CONSUMER.secret per consumer). Run it after each apply
// that changes the directory (restartOn the files).
//
// Its own superuser password comes from a FILE the mesh wrote (an accepted
// secret), never from the environment or argv: an environment variable needs a
// person in the middle and shows in `docker inspect`.
//
// The consumer's password never reaches the server in clear: the SCRAM
// verifier is computed here, as psql's \password does, and handed to ALTER
// ROLE through a transaction-local setting, so no password text is ever part
// of an SQL statement.
import postgres from 'postgres';
import { readFileSync } from 'node:fs';
import { pbkdf2Sync, createHmac, createHash, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { readProvides, readSecret } from './provision_files.js';

const IDENT = /^[a-z_][a-z0-9_]{0,62}$/;

/** SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey> (RFC 5802, PostgreSQL's stored form). */
export function scramVerifier(password: string, salt = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

export interface AdminOptions { host: string; port: number; user: string; passwordFile: string }
export interface Provisioned { consumer: string; role: string; database: string; created: boolean }

export async function provision(dir: string, admin: AdminOptions): Promise<Provisioned[]> {
  const pw = readFileSync(admin.passwordFile, 'utf8').replace(/\n$/, '');
  const sql = postgres({ host: admin.host, port: admin.port, user: admin.user, password: pw, database: 'postgres', max: 1, onnotice: () => {} });
  const out: Provisioned[] = [];
  try {
    for (const { binds, secretPath } of readProvides(dir)) {
      if (binds.kind !== 'postgres') continue;
      const role = String(binds.user);
      const database = String(binds.database);
      if (!IDENT.test(role) || !IDENT.test(database)) throw new Error(`${dir}/${binds.consumer}.binds names a role or database that is not a plain identifier.`);
      if (!secretPath) throw new Error(`${dir}/${binds.consumer}.secret is missing: the mesh has not made this pair's credential yet (mesh secret remake).`);
      const verifier = scramVerifier(readSecret(secretPath));
      const created = await sql.begin(async (tx) => {
        const [r] = await tx`select exists (select 1 from pg_roles where rolname = ${role}) as found`;
        await tx`select set_config('mesh.role', ${role}, true), set_config('mesh.verifier', ${verifier}, true)`;
        await tx`do $$ begin
                   if exists (select 1 from pg_roles where rolname = current_setting('mesh.role')) then
                     execute format('alter role %I login password %L', current_setting('mesh.role'), current_setting('mesh.verifier'));
                   else
                     execute format('create role %I login password %L', current_setting('mesh.role'), current_setting('mesh.verifier'));
                   end if;
                 end $$`;
        return !r!.found;
      });
      const [d] = await sql`select exists (select 1 from pg_database where datname = ${database}) as found`;
      // CREATE DATABASE cannot run inside a transaction or take parameters; both names were checked as plain identifiers above.
      if (!d!.found) await sql`create database ${sql(database)} owner ${sql(role)}`;
      out.push({ consumer: binds.consumer, role, database, created });
    }
  } finally {
    await sql.end();
  }
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: {
    dir: { type: 'string' }, host: { type: 'string', default: '127.0.0.1' }, port: { type: 'string', default: '5432' },
    user: { type: 'string', default: 'postgres' }, 'password-file': { type: 'string' },
  } });
  if (!values.dir || !values['password-file']) {
    throw new Error('usage: pg-provisioner --dir <root>/provides/<provision> --password-file FILE [--host H --port P --user postgres]');
  }
  const done = await provision(values.dir, { host: values.host!, port: Number(values.port), user: values.user!, passwordFile: values['password-file'] });
  for (const p of done) console.log(`${p.created ? 'created' : 'updated'} role ${p.role} for ${p.consumer}; database ${p.database}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => { console.error(`pg-provisioner: ${(err as Error).message}`); process.exit(1); });
}
