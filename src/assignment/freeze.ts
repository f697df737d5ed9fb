// `mesh freeze add|list|override|remove`: change-freeze windows. The hold
// itself is SQL (sql/assignment/0072-freeze.sql): a window's nodes are among
// assignment.held_nodes(), so every declare holds their change as a rollout
// holds it; mesh serve ends each window whose time is up and declares what
// it held (src/serve/freeze.ts).
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';

export interface FreezeRow {
  id: number;
  from_at: Date;
  until_at: Date;
  site: string | null;
  module: string | null;
  state: 'waiting' | 'holding' | 'ended' | 'overridden';
  holds: number;
  override_reason: string | null;
}

/** The nodes a window holds now, a line a window: "held by freeze F until T". */
export interface FreezeHold {
  freeze: number;
  until: Date;
  nodes: string[];
}

export async function freezeHolds(sql: Sql, nodes: string[] | null = null): Promise<FreezeHold[]> {
  const only = nodes && new Set(nodes);
  // FREEZE is a keyword of PostgreSQL's: the column is always qualified.
  const rows = await sql`select f.freeze as id, f.until_at, array_agg(f.node order by f.node) as nodes
                           from assignment.frozen_nodes() f group by f.freeze, f.until_at order by f.until_at, f.freeze`;
  return rows
    .map((r) => ({
      freeze: Number(r.id),
      until: r.until_at as Date,
      nodes: (r.nodes as string[]).filter((n) => !only || only.has(n)),
    }))
    .filter((h) => h.nodes.length > 0);
}

export const holdLine = (h: FreezeHold) =>
  `held by freeze ${h.freeze} until ${h.until.toISOString()}: ${h.nodes.length > 10 ? `${h.nodes.slice(0, 10).join(', ')} and ${h.nodes.length - 10} more` : h.nodes.join(', ')}`;

export function freezeAdd(o: { from: string; until: string; site?: string; module?: string }) {
  return withStore('assignment', async (sql) => {
    const [r] =
      await sql`select assignment.add_freeze(assignment.time_of(${o.from}::text), assignment.time_of(${o.until}::text),
                                                        ${o.site ?? null}::text, ${o.module ?? null}::text) as id`;
    const [row] = await sql<FreezeRow[]>`select * from assignment.freeze_status where id = ${r!.id}`;
    return row!;
  });
}

export function freezeList(): Promise<FreezeRow[]> {
  return withStore('assignment', readFreezes);
}

/** Every window and its state: `mesh freeze list` and the console's freezes page. */
export const readFreezes = (sql: Sql) =>
  sql<FreezeRow[]>`select * from assignment.freeze_status order by from_at, id` as Promise<FreezeRow[]>;

export function freezeOverride(id: number, reason: string) {
  return withStore('assignment', async (sql) => {
    await sql`select assignment.override_freeze(${id}::bigint, ${reason}::text)`;
    return { id, overridden: true as const, reason };
  });
}

export function freezeRemove(id: number) {
  return withStore('assignment', async (sql) => {
    await sql`select assignment.remove_freeze(${id}::bigint)`;
    return { id, removed: true as const };
  });
}

/** Serve's step: the windows whose time is up (or overridden), marked ended; the caller declares what they held. */
export const endFreezes = (sql: Sql) =>
  sql`select id, until_at from assignment.end_freezes()`.then((rows) => rows.map((r) => Number(r.id)));
