// A PostgreSQL of the suite's own that checks passwords (scram-sha-256 over
// TCP): the run's shared server trusts every connection, so a credential
// connecting there would prove nothing. Its superuser password is written to a
// 0600 file and handed to the mesh as an accepted secret.
import { mkdtempSync, mkdirSync, chownSync, chmodSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { initdb, spawnPostgres } from '../harness/postgres.js';
import { freePort } from '../harness/ports.js';
import { run } from '../../src/sys/proc.js';

export interface ScramPg {
  port: number;
  passwordFile: string;
  stop(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;

export async function startScramPostgres(): Promise<ScramPg> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-scram-pg-'));
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  const sock = join(dir, 'sock');
  mkdirSync(data, { mode: 0o700 });
  mkdirSync(sock, { mode: 0o700 });
  const passwordFile = join(dir, 'superuser.pw');
  writeFileSync(passwordFile, randomBytes(18).toString('base64url'), { mode: 0o600 });
  const initPw = join(dir, 'init.pw');
  writeFileSync(initPw, (await import('node:fs')).readFileSync(passwordFile), { mode: 0o600 });
  if (asRoot) {
    const uid = Number((await run('id', ['-u', 'postgres'])).trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).trim());
    for (const p of [data, sock, initPw]) chownSync(p, uid, gid);
  }
  await initdb(data, ['--auth-local=trust', '--auth-host=scram-sha-256', `--pwfile=${initPw}`]);
  rmSync(initPw);
  const port = await freePort();
  const child = await spawnPostgres(data, port, sock, [
    'fsync=off',
    'max_connections=40',
    'shared_buffers=16MB',
    'log_min_messages=fatal',
  ]);
  return {
    port,
    passwordFile,
    async stop() {
      if (child.exitCode === null) {
        const done = new Promise((r) => child.once('exit', r));
        child.kill('SIGINT');
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await done;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Connect as a consumer would, from the files its node wrote: the role and database it is, or the server's refusal. */
export async function connectAs(c: {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
}): Promise<string> {
  const sql = postgres({ ...c, max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    return (await sql`select current_user as u, current_database() as d`).map((r) => `${r.u}@${r.d}`)[0]!;
  } finally {
    await sql.end();
  }
}

/** Refused by the server: a wrong password, or a role that no longer exists (PostgreSQL says both as 28P01). */
export const refused = (p: Promise<unknown>) =>
  p.then(
    () => false,
    (e: { code?: string }) => e.code === '28P01',
  );
