// `mesh log`: the audit history (C3), newest last, read from the view a DBA
// would read (audit.log), narrowed by node, age and kind. The console's
// history page reads the same rows through readHistory on its own store.
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { nodeName } from '../wire/names.js';
import { parseDuration } from '../inventory/token.js';
import { refuse, MeshError } from '../sys/errors.js';

export interface LogOptions {
  node?: string;
  since?: string;
  kind?: string;
  limit?: number;
}

/** A filter the history cannot take (a bad node name, age, kind or limit): the asker's to fix, not the store's fault. */
export class FilterError extends Error {}

export async function readLog(o: LogOptions = {}) {
  checkFilter(o);
  return withStore('audit', (sql) => readHistory(sql, o));
}

/** The kinds a row may have (audit.kind), by name. */
export async function readKinds(sql: Sql): Promise<string[]> {
  return (await sql<{ name: string }[]>`select name from audit.kind order by name`).map((k) => k.name);
}

/** The rows `mesh log` prints, on a store already open: the newest LIMIT that match, oldest first. */
export async function readHistory(sql: Sql, o: LogOptions = {}) {
  const { since, limit } = checkFilter(o);
  if (o.kind !== undefined) {
    const kinds = await readKinds(sql);
    // A family by its prefix: --kind token is token-issued and token-spent.
    if (!kinds.some((k) => k === o.kind || k.startsWith(`${o.kind}-`))) {
      throw refuse(
        'MSH72',
        `--kind ${JSON.stringify(o.kind)} is not a kind of the history`,
        `use one of ${kinds.join(', ')} (or a prefix before a dash, e.g. token)`,
      );
    }
  }
  // The newest LIMIT rows that match, printed oldest first as a log reads.
  return sql`select * from (
      select seq, at, kind, node, actor, role, detail, what from audit.log
       where (${o.node ?? null}::text is null or node = ${o.node ?? null}::text)
         and (${since}::interval is null or at > now() - ${since}::interval)
         and (${o.kind ?? null}::text is null or kind = ${o.kind ?? null}::text or kind like ${(o.kind ?? '') + '-%'}::text)
       order by seq desc limit ${limit}) newest
    order by seq`;
}

function checkFilter(o: LogOptions): { since: string | null; limit: number } {
  try {
    if (o.node !== undefined) nodeName(o.node);
    const since = o.since === undefined ? null : parseDuration(o.since, '--since');
    const limit = o.limit ?? 100;
    if (!Number.isSafeInteger(limit) || limit < 1) throw refuse('MSH73', `--limit ${o.limit} is not a number of rows`);
    return { since, limit };
  } catch (err) {
    if (err instanceof MeshError) throw err; // a coded refusal keeps its code
    throw new FilterError((err as Error).message, { cause: err });
  }
}
