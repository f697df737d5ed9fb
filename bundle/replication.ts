// A streaming hot standby of the store, PostgreSQL's own replication; mesh
// adds no failover of its own. Two halves, each run on its machine:
//
//   primary:  a replication role of its own (mesh_replication, nothing but
//             REPLICATION and LOGIN), a physical slot per standby (the primary
//             keeps the WAL a standby has not received, so a standby away for
//             a while catches up instead of needing a new base backup),
//             pg_hba admitting that role from the standby's address alone, and
//             synchronous replication (below).
//   standby:  pg_basebackup -R through the slot; the role's password is read
//             from a passfile (0600, the postgres user's), named in
//             primary_conninfo, so it is never in the environment, an argv
//             or a log.
//
// Synchronous: with asynchronous streaming a commit the primary acknowledged
// may not have reached the standby when the primary dies, and a promotion
// loses it (a report mesh-host saw confirmed, a token spent). So the primary
// names the standby in synchronous_standby_names and keeps
// synchronous_commit=on: a commit returns once the standby has flushed it. The
// price: with the standby gone, writes wait. Running alone again is an
// operator's act (README: "The store's standby").
import { existsSync, readFileSync, appendFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type postgres from 'postgres';
import { writeAtomic, type Owner } from '../src/sys/atomic.js';
import { run as exec } from '../src/sys/proc.js';
import { refuse } from '../src/sys/errors.js';
import { parseModuleEntries } from '../src/wire/parse_resources.js';
import type { ModuleEntry } from '../src/wire/resources.js';

export const REPLICATION_ROLE = 'mesh_replication';

/** A standby's slot and application_name: one name, so pg_stat_replication and the slot say the same. */
export function standbySlot(standby: string): string {
  if (!/^[a-z][a-z0-9_]{0,40}$/.test(standby))
    throw refuse('MSHD6', `${JSON.stringify(standby)} cannot name a standby`);
  return `mesh_standby_${standby}`;
}

export interface PrimaryHalf {
  /** The primary's data directory (pg_hba.conf is there). */
  pgData: string;
  /** The address the standby connects from (one host: a /32 or /128 is admitted, nothing wider). */
  standbyAddress: string;
  /** The standby's name: its slot and its application_name. */
  standby: string;
}

/**
 * On the primary, as its superuser: the role (a new password each run: the
 * passfile written is the only copy), the slot, the pg_hba line and the
 * synchronous setting, then a reload. Returns the password for the passfile.
 */
export async function preparePrimary(
  su: postgres.Sql,
  h: PrimaryHalf,
): Promise<{ password: string; changed: string[] }> {
  const changed: string[] = [];
  const slot = standbySlot(h.standby);
  const password = randomBytes(24).toString('base64url');
  const [role] = await su`select 1 from pg_roles where rolname = ${REPLICATION_ROLE}`;
  // ALTER ROLE ... PASSWORD takes no parameter: the password is base64url, so it needs no quoting beyond the quotes.
  await su.unsafe(
    role
      ? `alter role ${REPLICATION_ROLE} with replication login password '${password}'`
      : `create role ${REPLICATION_ROLE} with replication login password '${password}'`,
  );
  changed.push(role ? `password of ${REPLICATION_ROLE}` : `role ${REPLICATION_ROLE}`);
  const [had] = await su`select 1 from pg_replication_slots where slot_name = ${slot}`;
  if (!had) {
    await su`select pg_create_physical_replication_slot(${slot})`;
    changed.push(`slot ${slot}`);
  }
  const mask = h.standbyAddress.includes(':') ? 128 : 32;
  const line = `host replication ${REPLICATION_ROLE} ${h.standbyAddress}/${mask} scram-sha-256`;
  const hba = join(h.pgData, 'pg_hba.conf');
  if (!readFileSync(hba, 'utf8').split('\n').includes(line)) {
    appendFileSync(hba, `# mesh: the standby ${h.standby}, and only it, may stream\n${line}\n`);
    changed.push(`pg_hba ${h.standbyAddress}`);
  }
  const [sync] = await su`select setting from pg_settings where name = 'synchronous_standby_names'`;
  const want = `FIRST 1 (${slot})`;
  if (sync!.setting !== want) {
    await su.unsafe(`alter system set synchronous_standby_names = '${want}'`);
    changed.push(`synchronous_standby_names ${want}`);
  }
  await su.unsafe(`alter system set synchronous_commit = 'on'`);
  await su`select pg_reload_conf()`;
  return { password, changed };
}

/**
 * The primary's module entry opening the store's port to the standby's module
 * alone (X2), parsed as every module's entries are: its `why` is shown on every
 * node's firewall, so it keeps to the letters a `why` may hold.
 */
export function replicationOpening(port: number, standbyModule: string): ModuleEntry[] {
  return parseModuleEntries([
    {
      kind: 'opening',
      id: 'opening:store-replication',
      name: 'store-replication',
      proto: 'tcp',
      port,
      from: `module:${standbyModule}`,
      why: 'the standby of the store streams from here',
    },
  ]);
}

/** The passfile line for the standby's replication connection (the database field of a replication connection is `replication`). */
export function passfileLine(host: string, port: number, password: string): string {
  const esc = (s: string) => s.replace(/\\/g, '\\\\').replace(/:/g, '\\:');
  return `${esc(host)}:${port}:replication:${REPLICATION_ROLE}:${esc(password)}\n`;
}

export async function writePassfile(path: string, line: string, owner?: Owner): Promise<void> {
  await writeAtomic(path, line, 0o600, owner);
}

export interface StandbyHalf {
  /** An empty (or absent) directory the standby's cluster is cloned into. */
  pgData: string;
  primaryHost: string;
  primaryPort: number;
  /** The 0600 passfile holding the replication role's password, readable by postgres. */
  passfile: string;
  standby: string;
  /** Run the programs as this user (postgres, when root runs the bundle). */
  asUser?: string;
  pgBasebackup: string;
}

/**
 * On the standby: pg_basebackup through the slot, -R writing standby.signal
 * and a primary_conninfo that names the passfile (never a password).
 */
export async function cloneStandby(s: StandbyHalf): Promise<void> {
  if (existsSync(join(s.pgData, 'PG_VERSION'))) {
    throw refuse('MSHD7', `${s.pgData} already holds a cluster`);
  }
  const slot = standbySlot(s.standby);
  const conn = `host=${s.primaryHost} port=${s.primaryPort} user=${REPLICATION_ROLE} application_name=${slot} passfile=${s.passfile}`;
  // A fast checkpoint: the default spread one waits most of checkpoint_timeout (minutes) before a byte is copied.
  const args = ['-d', conn, '-D', s.pgData, '-R', '-S', slot, '-X', 'stream', '--checkpoint=fast', '--no-password'];
  const [cmd, argv] = s.asUser ? ['runuser', ['-u', s.asUser, '--', s.pgBasebackup, ...args]] : [s.pgBasebackup, args];
  await exec(cmd, argv, { timeoutMs: 30 * 60_000 });
  // The clone carries the primary's ALTER SYSTEM, synchronous_standby_names
  // among it: promoted, it would wait for a standby of its own that does not
  // exist, and every commit would hang. A promoted standby runs alone until
  // the primary half is run there for a new standby.
  const auto = join(s.pgData, 'postgresql.auto.conf');
  const kept = readFileSync(auto, 'utf8')
    .split('\n')
    .filter((l) => !/^\s*synchronous_standby_names\s*=/.test(l));
  await writeAtomic(auto, kept.join('\n'), 0o600, statOwner(s.pgData));
}

function statOwner(path: string): Owner {
  const st = statSync(path);
  return { uid: st.uid, gid: st.gid };
}
