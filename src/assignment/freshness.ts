// `mesh freshness`: how long a declaration holds once signed (per mesh), and
// how fresh each node's newest one is. The rule lives in SQL
// (sql/assignment/0015-freshness.sql); serve signs again at half the lifetime.
import { withStore } from '../store/with_store.js';
import { storeError } from '../store/errors.js';

const UNITS: Record<string, string> = { s: 'seconds', m: 'minutes', h: 'hours', d: 'days' };

/** "7d", "12h", "30m", "45s" as a PostgreSQL interval; anything else is refused, naming the form. */
export function parseLifetime(text: string): string {
  const m = /^([1-9][0-9]{0,6})([smhd])$/.exec(text.trim());
  if (!m) throw new Error(`${JSON.stringify(text)} is not a lifetime: give a whole number and a unit, such as 7d, 12h, 30m or 45s.`);
  return `${m[1]} ${UNITS[m[2]!]}`;
}

export async function freshness(lifetime?: string) {
  const wanted = lifetime === undefined ? undefined : parseLifetime(lifetime);
  return withStore('assignment', async (sql) => {
    if (wanted !== undefined) await sql`select assignment.set_declaration_lifetime(${wanted}::interval)`.catch((err) => { throw storeError(err); });
    const [s] = await sql`select lifetime::text as lifetime from assignment.freshness_setting`;
    const nodes = await sql`select node, serial, signed_at, expires_at, expired from assignment.declaration_freshness order by expires_at nulls first, node`;
    return { lifetime: s!.lifetime as string, changed: wanted !== undefined, nodes };
  });
}
