// `mesh overlay why FROM TO [--port P]`: the first fact that blocks FROM
// reaching TO, or "path open" (Q2). The facts and their order are SQL
// (assignment.explain_path); this only reads the one row.
import { withStore } from '../store/with_store.js';
import { nodeName } from '../wire/names.js';
import type { Sql } from '../store/connect.js';
import { refuse } from '../sys/errors.js';

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

export async function overlayWhy(from: string, to: string, given: string | number | null): Promise<Why> {
  nodeName(from);
  nodeName(to);
  return withStore('assignment', (sql) => readWhy(sql, from, to, given));
}

/**
 * The port as the operator gave it (`--port`, `?port=`), or null. Only whether it is a
 * whole number the function's integer parameter holds is read here; which numbers are
 * ports is assignment.explain_path's rule, with the same code (MSHY3).
 */
function portOf(given: string | number | null): number | null {
  if (given === null || given === '') return null;
  const n = Number(given);
  if (!Number.isInteger(n) || n < -(2 ** 31) || n >= 2 ** 31)
    throw refuse('MSHY3', `port ${JSON.stringify(String(given))} is not a port number`);
  return n;
}

/** The answer on a store already open (the console reads it as assignment's reader). */
export async function readWhy(sql: Sql, from: string, to: string, given: string | number | null): Promise<Why> {
  const port = portOf(given);
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
