// A throwaway PostgreSQL cluster: initdb into a temp dir, a free port, a
// socket dir of its own. Never a server someone else started.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, chownSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from './ports.js';
import { run } from '../../src/sys/proc.js';

export interface Postgres {
  port: number;
  socketDir: string;
  url(db: string, user?: string): string;
  stop(): Promise<void>;
  restart(): Promise<void>;
}

export function pgBin(name: string): string {
  for (const v of ['17', '16', '15', '14']) {
    const p = `/usr/lib/postgresql/${v}/bin/${name}`;
    if (existsSync(p)) return p;
  }
  const versions = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql') : [];
  throw new Error(
    `no PostgreSQL server binaries found (looked in /usr/lib/postgresql, found ${versions.join(', ') || 'nothing'}): apt-get install -y --no-install-recommends postgresql`,
  );
}

const asRoot = process.getuid?.() === 0;

// postgres refuses to run as root: as root we run it as the postgres user.
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

/** initdb into DATA (owned by the postgres user when run as root), with AUTH its --auth options. */
export async function initdb(data: string, auth: string[]): Promise<void> {
  const [c, a] = asPostgres(pgBin('initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    ...auth,
    '-E',
    'UTF8',
    '--no-sync',
    '--no-instructions',
  ]);
  await run(c, a);
}

/**
 * postgres on DATA, listening on 127.0.0.1:PORT and in SOCKET_DIR, with
 * SETTINGS (name=value each); resolves once pg_isready says it accepts, or
 * fails with what it said if it exits or a minute passes.
 */
export async function spawnPostgres(
  data: string,
  port: number,
  socketDir: string,
  settings: string[],
): Promise<ChildProcess> {
  const [c, a] = asPostgres(pgBin('postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-k',
    socketDir,
    '-c',
    'listen_addresses=127.0.0.1',
    ...settings.flatMap((x) => ['-c', x]),
  ]);
  const child = spawn(c, a, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await run(pgBin('pg_isready'), ['-h', socketDir, '-p', String(port), '-U', 'postgres']);
      return child;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`PostgreSQL did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

export interface ClusterOptions {
  /**
   * Durable: synchronous_commit as PostgreSQL ships it (and as ALTER SYSTEM
   * sets it), for suites about what a failover keeps. fsync stays off: the
   * crash such a suite makes is a server's, not the machine's, and what the
   * kernel holds survives it.
   */
  durable?: boolean;
  /** More `-c name=value` settings. */
  settings?: string[];
  /** Where the socket goes (default DIR/pgsock): a socket's path must stay under 107 bytes. */
  socketDir?: string;
}

export interface Cluster extends Postgres {
  data: string;
  /** Stopped in this mode: immediate is a crash (no checkpoint, clients cut off). */
  stopMode(mode: 'fast' | 'immediate'): Promise<void>;
}

async function ownedDir(path: string): Promise<void> {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  if (asRoot) {
    const uid = Number((await run('id', ['-u', 'postgres'])).trim());
    const gid = Number((await run('id', ['-g', 'postgres'])).trim());
    chownSync(path, uid, gid);
  }
}

export async function startPostgres(dir: string, opts: ClusterOptions = {}): Promise<Cluster> {
  const data = join(dir, 'pgdata');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  mkdirSync(data, { mode: 0o700 });
  await ownedDir(data);
  await initdb(data, ['--auth=trust']);
  return startCluster(dir, data, opts);
}

/** Start the cluster already in DATA (initdb'd, or cloned by pg_basebackup). */
export async function startCluster(dir: string, data: string, opts: ClusterOptions = {}): Promise<Cluster> {
  const socketDir = opts.socketDir ?? join(dir, 'pgsock');
  await ownedDir(socketDir);
  const port = await freePort();
  const fast = ['fsync=off', 'full_page_writes=off', ...(opts.durable ? [] : ['synchronous_commit=off'])];
  const settings = [
    ...fast,
    'max_connections=400',
    'shared_buffers=128MB',
    'log_min_messages=fatal',
    ...(opts.settings ?? []),
  ];
  let child: ChildProcess;
  const start = async () => {
    child = await spawnPostgres(data, port, socketDir, settings);
  };
  // As root the child is runuser, which does not pass a signal on to postgres:
  // pg_ctl stops the server itself, and runuser exits after it.
  const stopMode = async (mode: 'fast' | 'immediate') => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const done = new Promise((r) => child.once('exit', r));
    const [c, a] = asPostgres(pgBin('pg_ctl'), ['stop', '-D', data, '-m', mode, '-w', '-t', '30']);
    try {
      await run(c, a, { timeoutMs: 40_000 });
    } catch {
      child.kill('SIGKILL');
    }
    await done;
  };
  const stop = () => stopMode('fast');
  await start();
  return {
    port,
    socketDir,
    data,
    url: (db, user = 'postgres') => `postgres://${user}@127.0.0.1:${port}/${db}`,
    stop,
    stopMode,
    async restart() {
      await stop();
      await start();
    },
  };
}
