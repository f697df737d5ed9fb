// A primary and its streaming hot standby, both throwaway, set up by the
// bundle's own replication code (bundle/replication.ts): the role, the slot,
// the pg_hba line, the passfile, pg_basebackup -R, synchronous replication.
// The store it hands out lists both hosts, as an operator's would.
import { mkdtempSync, mkdirSync, chmodSync, chownSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import postgres from 'postgres';
import { startPostgres, startCluster, pgBin, type Cluster } from './postgres.js';
import { prepareTemplate, type Store } from './store.js';
import { CONTEXTS, storeVariable, storeRole, readerRole } from '../../src/store/contexts.js';
import { CONSOLE_CONTEXTS } from '../../src/console/contexts.js';
import { OWNER_VARIABLE } from '../../src/store/migrate.js';
import { preparePrimary, passfileLine, writePassfile, cloneStandby, standbySlot } from '../../bundle/replication.js';
import { run } from '../../src/sys/proc.js';
import { leave, suiteDir } from './leftovers.js';

export interface Replicated {
  primary: Cluster;
  standby: Cluster;
  /** The store over both hosts: MESH_STORE_* list the primary, then the standby. */
  store: Store;
  /** The standby's name (its slot and application_name). */
  name: string;
  passfile: string;
  su(c: Cluster): postgres.Sql;
  stop(): Promise<void>;
}

const DB = 'mesh';

async function ids(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  return {
    uid: Number((await run('id', ['-u', 'postgres'])).trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).trim()),
  };
}

export async function replicated(): Promise<Replicated> {
  const tmp = mkdtempSync(join(tmpdir(), 'mesh-replicated-'));
  chmodSync(tmp, 0o755); // the postgres user must reach the data dirs below
  // Sockets in a short path of their own: under a suite's dir the path passes the 107 bytes a socket may have.
  const sock = mkdtempSync('/tmp/mesh-rs-');
  chmodSync(sock, 0o755);
  const owner = await ids();
  const clusters: Cluster[] = [];
  const sqls: postgres.Sql[] = [];
  const su = (c: Cluster) => {
    const s = postgres(c.url(DB), { max: 1, onnotice: () => {} });
    sqls.push(s);
    return s;
  };
  const stop = async () => {
    await Promise.allSettled(sqls.map((s) => s.end({ timeout: 2 })));
    await Promise.allSettled(clusters.map((c) => c.stopMode('immediate')));
    rmSync(sock, { recursive: true, force: true });
    if (!suiteDir()) rmSync(tmp, { recursive: true, force: true });
  };
  try {
    // Durable: what a failover keeps depends on fsync and synchronous_commit, so neither is turned off here.
    const primary = await startPostgres(join(tmp, 'primary'), { durable: true, socketDir: join(sock, 'p') });
    clusters.push(primary);
    leave({ kind: 'servers', dir: tmp, pgPort: primary.port });
    const root = postgres(primary.url('postgres'), { max: 1, onnotice: () => {} });
    try {
      const template = await prepareTemplate(root, primary);
      await root.unsafe(`create database "${DB}" template "${template}"`);
    } finally {
      await root.end();
    }
    // The harness's initdb trusts every local replication connection: those
    // lines go, so the standby gets in with the role's password or not at all.
    const hba = join(primary.data, 'pg_hba.conf');
    writeFileSync(
      hba,
      readFileSync(hba, 'utf8')
        .split('\n')
        .filter((l) => !/^\s*host\s+replication\s/.test(l))
        .join('\n'),
    );
    const name = 'b';
    const p = su(primary);
    const { password } = await preparePrimary(p, { pgData: primary.data, standbyAddress: '127.0.0.1', standby: name });
    const passfile = join(tmp, 'replication.pgpass');
    await writePassfile(passfile, passfileLine('127.0.0.1', primary.port, password), owner);
    const sdir = join(tmp, 'standby');
    const sdata = join(sdir, 'pgdata');
    mkdirSync(sdir, { mode: 0o755 });
    if (owner) chownSync(sdir, owner.uid, owner.gid);
    await cloneStandby({
      pgData: sdata,
      primaryHost: '127.0.0.1',
      primaryPort: primary.port,
      passfile,
      standby: name,
      asUser: owner ? 'postgres' : undefined,
      pgBasebackup: pgBin('pg_basebackup'),
    });
    const standby = await startCluster(sdir, sdata, { durable: true, socketDir: join(sock, 's') });
    clusters.push(standby);
    // Streaming from here on (whether synchronously is the suite's to check): wait until the primary says so.
    for (let i = 0; ; i++) {
      const [r] = await p`select state from pg_stat_replication where application_name = ${standbySlot(name)}`;
      if (r?.state === 'streaming') break;
      if (i > 300) throw new Error(`the standby never streamed (${r?.state ?? 'not connected'})`);
      await new Promise((res) => setTimeout(res, 100));
    }
    const hosts = `127.0.0.1:${primary.port},127.0.0.1:${standby.port}`;
    const env: NodeJS.ProcessEnv = {};
    for (const ctx of CONTEXTS)
      env[storeVariable(ctx)] = `postgres://${storeRole(ctx)}@${hosts}/${DB}?target_session_attrs=read-write`;
    env[OWNER_VARIABLE.audit!] = `postgres://postgres@${hosts}/${DB}?target_session_attrs=read-write`;
    const consoleEnv: NodeJS.ProcessEnv = {};
    for (const ctx of CONSOLE_CONTEXTS)
      consoleEnv[storeVariable(ctx)] = `postgres://${readerRole(ctx)}@${hosts}/${DB}?target_session_attrs=read-write`;
    const store: Store = {
      db: DB,
      env,
      consoleEnv,
      // A DBA's view of the primary of the moment: this connection follows it too.
      admin: postgres(`postgres://postgres@${hosts}/${DB}`, {
        max: 2,
        onnotice: () => {},
        target_session_attrs: 'primary',
      }),
      url: (ctx) => env[storeVariable(ctx as never)]!,
      async drop() {
        await store.admin.end({ timeout: 2 });
      },
    };
    return { primary, standby, store, name, passfile, su, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
