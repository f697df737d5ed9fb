// Example provider module: makes every consumer's role and database on a real
// PostgreSQL from the directory the mesh wrote (<root>/provides/<provision>/,
// one CONSUMER.binds and CONSUMER.secret per consumer, and while a rotation
// has not settled a CONSUMER.GENERATION.secret per earlier generation some
// holder may still use). Run it after each apply that changes the directory
// (restartOn the files). Each generation is a login role of its own, so the
// old and the new credential both work until the mesh stops declaring the old.
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
import { join, basename } from 'node:path';
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

export interface AdminOptions {
  host: string;
  port: number;
  user: string;
  passwordFile: string;
}
export interface Provisioned {
  consumer: string;
  role: string;
  database: string;
  created: boolean;
  logins: string[];
  retired: string[];
}
interface Login {
  role: string;
  generation: number;
  secret: string;
}

/** The login roles a provider's binds say it must accept, each checked to be <user>-<generation> and read from this directory. */
function loginsOf(dir: string, group: string, binds: Record<string, unknown>): Login[] {
  const logins = binds.logins;
  if (!Array.isArray(logins) || logins.length === 0)
    throw new Error(
      `${dir}/${binds.consumer}.binds lists no login role: the mesh has not made this pair's credential yet (mesh secret remake).`,
    );
  return logins.map((l: Login) => {
    if (l.role !== `${group}-${l.generation}` || !Number.isSafeInteger(l.generation))
      throw new Error(
        `${dir}/${binds.consumer}.binds names a login role ${JSON.stringify(l.role)} that is not ${group}-GENERATION.`,
      );
    // Only files of this directory: the binds say which, the directory says where.
    return { ...l, secret: join(dir, basename(String(l.secret))) };
  });
}

/**
 * One consumer's roles, in one transaction: the group role owns the grants and
 * cannot log in; each generation the binds list is a login role of its own
 * whose sessions act as the group (ALTER ROLE ... SET role), so what a
 * consumer creates is owned by the group whichever generation it logged in
 * with; every other login role of the group is dropped (no longer accepted).
 */
export async function provision(dir: string, admin: AdminOptions): Promise<Provisioned[]> {
  const pw = readFileSync(admin.passwordFile, 'utf8').replace(/\n$/, '');
  const sql = postgres({
    host: admin.host,
    port: admin.port,
    user: admin.user,
    password: pw,
    database: 'postgres',
    max: 1,
    onnotice: () => {},
  });
  const out: Provisioned[] = [];
  try {
    for (const { binds, secretPath } of readProvides(dir)) {
      if (binds.kind !== 'postgres') continue;
      const role = String(binds.user);
      const database = String(binds.database);
      if (!IDENT.test(role) || !IDENT.test(database))
        throw new Error(`${dir}/${binds.consumer}.binds names a role or database that is not a plain identifier.`);
      if (!secretPath)
        throw new Error(
          `${dir}/${binds.consumer}.secret is missing: the mesh has not made this pair's credential yet (mesh secret remake).`,
        );
      const logins = loginsOf(dir, role, binds).map((l) => ({
        role: l.role,
        verifier: scramVerifier(readSecret(l.secret)),
      }));
      const { created, retired } = await sql.begin(async (tx) => {
        const [r] = await tx`select exists (select 1 from pg_roles where rolname = ${role}) as found`;
        await tx`select set_config('mesh.group', ${role}, true)`;
        await tx`do $$ begin
                   if exists (select 1 from pg_roles where rolname = current_setting('mesh.group')) then
                     execute format('alter role %I nologin password null', current_setting('mesh.group'));
                   else
                     execute format('create role %I nologin', current_setting('mesh.group'));
                   end if;
                 end $$`;
        for (const l of logins) {
          await tx`select set_config('mesh.role', ${l.role}, true), set_config('mesh.verifier', ${l.verifier}, true)`;
          await tx`do $$ begin
                     if exists (select 1 from pg_roles where rolname = current_setting('mesh.role')) then
                       execute format('alter role %I login password %L', current_setting('mesh.role'), current_setting('mesh.verifier'));
                     else
                       execute format('create role %I login password %L', current_setting('mesh.role'), current_setting('mesh.verifier'));
                     end if;
                     execute format('grant %I to %I', current_setting('mesh.group'), current_setting('mesh.role'));
                     execute format('alter role %I set role = %L', current_setting('mesh.role'), current_setting('mesh.group'));
                   end $$`;
        }
        // Every other generation's login role of this group: no longer accepted.
        const gone = await tx`select m.rolname from pg_roles m
                               join pg_auth_members a on a.member = m.oid join pg_roles g on g.oid = a.roleid
                              where g.rolname = ${role} and starts_with(m.rolname, ${role + '-'}) and not (m.rolname = any(${logins.map((l) => l.role)}::text[]))`;
        for (const g of gone) {
          await tx`select set_config('mesh.role', ${g.rolname as string}, true)`;
          await tx`do $$ begin
                     execute format('drop role %I', current_setting('mesh.role'));
                   exception when dependent_objects_still_exist then
                     -- It owns something (a consumer set its role by hand): it stays, but nobody logs in as it.
                     execute format('alter role %I nologin password null', current_setting('mesh.role'));
                   end $$`;
        }
        return { created: !r!.found, retired: gone.map((g) => g.rolname as string) };
      });
      const [d] = await sql`select exists (select 1 from pg_database where datname = ${database}) as found`;
      // CREATE DATABASE cannot run inside a transaction or take parameters; both names were checked as plain identifiers above.
      if (!d!.found) await sql`create database ${sql(database)} owner ${sql(role)}`;
      out.push({ consumer: binds.consumer, role, database, created, logins: logins.map((l) => l.role), retired });
    }
  } finally {
    await sql.end();
  }
  return out;
}

/** One line a consumer, as the test and an operator read it. */
export function said(p: Provisioned): string {
  return `${p.created ? 'created' : 'updated'} role ${p.role} for ${p.consumer}; database ${p.database}; accepts ${p.logins.join(', ')}${p.retired.length ? `; retired ${p.retired.join(', ')}` : ''}`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dir: { type: 'string' },
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '5432' },
      user: { type: 'string', default: 'postgres' },
      'password-file': { type: 'string' },
    },
  });
  if (!values.dir || !values['password-file']) {
    throw new Error(
      'usage: pg-provisioner --dir <root>/provides/<provision> --password-file FILE [--host H --port P --user postgres]',
    );
  }
  const done = await provision(values.dir, {
    host: values.host!,
    port: Number(values.port),
    user: values.user!,
    passwordFile: values['password-file'],
  });
  for (const p of done) console.log(said(p));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`pg-provisioner: ${(err as Error).message}`);
    process.exit(1);
  });
}
