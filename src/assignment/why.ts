// `mesh overlay why FROM TO [--port P]`: the first fact that blocks FROM
// reaching TO, or "path open" (Q2). The facts and their order are SQL
// (assignment.explain_path); this only reads the one row.
import { withStore } from '../store/with_store.js';
import { nodeName } from '../wire/names.js';
import type { Sql } from '../store/connect.js';

export type Fact =
  | 'no edge'
  | 'no opening'
  | 'end out of touch'
  | 'end stale'
  | 'end failing'
  | 'key not applied'
  | 'declaration owed'
  | 'path open';

export interface Why {
  from: string;
  to: string;
  port: number | null;
  fact: Fact;
  detail: string;
  remedy: string | null;
}

export async function overlayWhy(from: string, to: string, port: number | null): Promise<Why> {
  nodeName(from);
  nodeName(to);
  return withStore('assignment', (sql) => readWhy(sql, from, to, port));
}

/** The answer on a store already open (the console reads it as assignment's reader). */
export async function readWhy(sql: Sql, from: string, to: string, port: number | null): Promise<Why> {
  const [r] = await sql`select fact, detail, remedy
                          from assignment.explain_path(from_node => ${from}::text, to_node => ${to}::text, port => ${port}::integer)`;
  return {
    from,
    to,
    port,
    fact: r!.fact as Fact,
    detail: r!.detail as string,
    remedy: (r!.remedy as string | null) ?? null,
  };
}
