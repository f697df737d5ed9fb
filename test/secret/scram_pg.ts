// A PostgreSQL of the suite's own that checks passwords (scram-sha-256 over
// TCP): the run's shared server trusts every connection, so a credential
// connecting there would prove nothing. Its superuser password is written to a
// 0600 file and handed to the mesh as an accepted secret.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, chownSync, chmodSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { pgBin } from '../harness/postgres.js';
import { freePort } from '../harness/ports.js';
import { run } from '../../src/sys/proc.js';

export interface ScramPg {
  port: number;
  passwordFile: string;
  stop(): Promise<void>;
}

const asRoot = process.getuid?.() === 0;
const asPostgres = (cmd: string, args: string[]): [string, string[]] =>
  asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];

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
  const [c1, a1] = asPostgres(pgBin('initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    `--pwfile=${initPw}`,
    '-E',
    'UTF8',
    '--no-sync',
    '--no-instructions',
  ]);
  await run(c1, a1);
  rmSync(initPw);
  const port = await freePort();
  const [c2, a2] = asPostgres(pgBin('postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    sock,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'fsync=off',
    '-c',
    'max_connections=40',
    '-c',
    'shared_buffers=16MB',
    '-c',
    'log_min_messages=fatal',
  ]);
  const child: ChildProcess = spawn(c2, a2, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await run(pgBin('pg_isready'), ['-h', sock, '-p', String(port), '-U', 'postgres']);
      break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`PostgreSQL did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
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
