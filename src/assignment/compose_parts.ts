// Composing a large fleet in parts, on several connections at once, all
// reading one snapshot: `mesh plan --all`'s way (a plan commits nothing, so
// its parts must agree with each other). Why: one statement runs on one
// core, and composing a large fleet is most of a plan; the machine has more
// than one. Each part is the same statement as one composition of all, for
// its share of the nodes; the caller reads a part as it arrives while the
// next is still composing.
//
// One snapshot: the reading transaction exports its snapshot; each part
// imports it (repeatable read), so no part sees a change another does not.
// (`mesh declare` commits its parts apart, under the declare turn:
// src/assignment/declare.ts.)
import type postgres from 'postgres';
import type { Sql } from '../store/connect.js';

/** Parts a composition of the whole fleet is split into (connections besides the declaring one). */
export const COMPOSE_PARTS = 2;
/** Below this many nodes a part costs more in fixed work (the overlay's members, the firewall's openings) than it saves. */
export const MIN_NODES_PER_PART = 1000;

export function partsFor(nodes: number): number {
  return Math.max(1, Math.min(COMPOSE_PARTS, Math.floor(nodes / MIN_NODES_PER_PART)));
}

export type Tx = postgres.TransactionSql<Record<string, never>>;
type Compose = (
  sql: Sql | Tx | postgres.ReservedSql<Record<string, never>>,
  nodes: string[],
) => Promise<postgres.Row[]>;

/**
 * Compose TARGETS (sorted) in PARTS on connections of POOL, each reading the
 * snapshot TX exports; ONPART gets each part's rows as it arrives, one
 * part at a time. Resolves to what ONPART made of each, in TARGETS' order.
 */
export async function composeInParts<T>(
  tx: Tx,
  pool: Sql,
  targets: string[],
  parts: number,
  compose: Compose,
  onPart: (rows: postgres.Row[]) => Promise<T[]>,
): Promise<T[]> {
  const [s] = await tx`select pg_export_snapshot() as id`;
  const snapshot = String(s!.id);
  // SET TRANSACTION SNAPSHOT takes a literal, not a parameter: the id is PostgreSQL's own (hex and dashes).
  if (!/^[0-9A-F]+-[0-9A-F]+(-[0-9A-F]+)?$/i.test(snapshot)) throw new Error(`unexpected snapshot id ${snapshot}`);
  // Contiguous ranges of the sorted names, so each part's rows come back sorted as the whole would;
  // as long as each other by weight, a node with a long peer list weighing more.
  const long = await tx`select node, peers from overlay.long_peer_lists()`;
  const shares = splitByWeight(targets, new Map(long.map((r) => [r.node as string, Number(r.peers)])), parts);
  let handed: Promise<unknown> = Promise.resolve();
  const made = await Promise.all(
    shares.map(async (share) => {
      // A reserved connection has no begin(): the transaction is spelled out, ended either way.
      const conn = await pool.reserve();
      let rows: postgres.Row[];
      try {
        await conn.unsafe('begin isolation level repeatable read read only');
        await conn.unsafe(`set transaction snapshot '${snapshot}'`);
        rows = await compose(conn, share);
        await conn.unsafe('commit');
      } catch (err) {
        await conn.unsafe('rollback').catch(() => {});
        throw err;
      } finally {
        conn.release();
      }
      // One part at a time into the declaring transaction (its statements run in turn).
      const mine = handed.then(() => onPart(rows));
      handed = mine;
      return mine;
    }),
  );
  return made.flat();
}

/** A peer in a node's list costs about this fraction of composing a node (hubs and dialable nodes, 100,000 nodes). */
export const NODES_A_PEER = 0.1;

/** TARGETS in at most PARTS contiguous ranges of about equal weight: 1 a node, and NODES_A_PEER for each of its PEERS. */
export function splitByWeight(targets: string[], peers: Map<string, number>, parts: number): string[][] {
  const weight = (n: string) => 1 + NODES_A_PEER * (peers.get(n) ?? 0);
  const total = targets.reduce((a, n) => a + weight(n), 0);
  const shares: string[][] = [[]];
  let run = 0;
  for (const n of targets) {
    // A new range once this one holds its share: the k-th closes at k/PARTS of the total.
    if (run >= (total * shares.length) / parts && shares.length < parts) shares.push([]);
    shares[shares.length - 1]!.push(n);
    run += weight(n);
  }
  return shares.filter((p) => p.length);
}
