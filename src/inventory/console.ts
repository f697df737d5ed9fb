// The console's sign-in, spent in SQL as enrolment tokens are
// (inventory.spend_console_token): a link's secret and a session's cookie are
// random, only their sha256 is stored, and expiry is the database's to judge.
// Also what the console reads of a node beyond node_status: its last report.
import { createHash, randomBytes } from 'node:crypto';
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { storeError } from '../sys/errors.js';
import { parseDuration } from './token.js';

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** A new one-time sign-in secret; the link carrying it is the console's to write. */
export async function issueSignIn(ttl = '10m'): Promise<{ secret: string; expires: Date }> {
  const secret = randomBytes(32).toString('base64url');
  const expires = await withStore('inventory', async (sql) => {
    const [r] = await sql<
      { expires: Date }[]
    >`select inventory.issue_console_token(token_hash => ${sha256(secret)}::bytea, ttl => ${parseDuration(ttl)}::interval) as expires`;
    return r!.expires;
  });
  return { secret, expires };
}

/** Spend SECRET once and open a session; refused (MSH09) when unknown, spent or expired. */
export async function openSession(
  sql: Sql,
  secret: string,
  lifetime = '12h',
): Promise<{ cookie: string; expires: Date }> {
  const cookie = randomBytes(32).toString('base64url');
  try {
    const [r] = await sql<
      { expires: Date }[]
    >`select inventory.spend_console_token(token_hash => ${sha256(secret)}::bytea,
                                                 session_hash => ${sha256(cookie)}::bytea, session_ttl => ${parseDuration(lifetime)}::interval) as expires`;
    return { cookie, expires: r!.expires };
  } catch (err) {
    throw storeError(err);
  }
}

/** Sign out: COOKIE's session is closed (inventory.close_console_session), open or not. */
export async function closeSession(sql: Sql, cookie: string): Promise<void> {
  await sql`select inventory.close_console_session(session_hash => ${sha256(cookie)}::bytea)`;
}

/** Milliseconds COOKIE's session has left by the database's clock, or null when it is not open (console_session_open judges). */
export async function sessionLeft(sql: Sql, cookie: string): Promise<number | null> {
  const h = sha256(cookie);
  const [r] = await sql<{ left_ms: number | null }[]>`
    select case when inventory.console_session_open(session_hash => ${h}::bytea)
                then (select extract(epoch from s.expires_at - now()) * 1000 from inventory.console_session s where s.session_hash = ${h}::bytea)::float8
           end as left_ms`;
  return r!.left_ms;
}

export interface FailedEntry {
  id: string;
  error: string;
}

/** Each node's failing resources with their errors (of every node, or of the nodes named: one, or a page of the fleet), from its last apply that could not finish (inventory 0008): the fleet page lists them by id, the node page with the error. */
export async function readFailing(sql: Sql, node?: string | string[]): Promise<Map<string, FailedEntry[]>> {
  const names = node === undefined ? null : Array.isArray(node) ? node : [node];
  const rows = await sql<{ node: string; failed: FailedEntry[] }[]>`select node, failed from inventory.apply_failure
    where (${names}::text[] is null or node = any(${names}::text[]))`;
  return new Map(rows.map((r) => [r.node, r.failed]));
}

/** One node's last report as kept (R2): what it holds, with the report's age. What failed is readFailing's (one path for both pages). */
export async function readReport(sql: Sql, node: string) {
  const [r] = await sql<
    {
      serial: bigint;
      held: { id: string; kind: string; target: string; origin: string; digest: string }[];
      reported_at: Date;
      report_age: string;
    }[]
  >`
    select serial, held, reported_at, inventory.describe_age(now() - reported_at) as report_age from inventory.report where node = ${node}`;
  return r ?? null;
}

/** One node's last refusal as inventory.refusal keeps it: its kind, and how many times in a row it was said (repeats folded). */
export async function readRefusal(sql: Sql, node: string) {
  const [r] = await sql<
    { serial: string | null; fault: string; reason: string; times: number; first_at: Date; refused_at: Date }[]
  >`select serial, fault, reason, times, first_at, refused_at from inventory.refusal where node = ${node}`;
  return r ? { ...r, serial: r.serial === null ? null : Number(r.serial) } : null;
}

/** Wait for a change to nodes, reports or failures (inventory 0005's and 0009's triggers): the console re-reads then, never on a one-second poll. */
export async function onInventoryChange(sql: Sql, f: () => void): Promise<{ unlisten(): Promise<void> }> {
  return sql.listen('mesh_inventory_changed', () => f());
}
