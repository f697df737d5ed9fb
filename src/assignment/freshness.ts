// `mesh freshness`: how long a declaration holds once signed (per mesh), and
// how fresh each node's newest one is. The rule lives in SQL
// (sql/assignment/0015-freshness.sql); serve signs again at half the lifetime.
import { withStore } from '../store/with_store.js';
import { storeError } from '../sys/errors.js';
import { parseDuration } from '../inventory/token.js';

export async function freshness(lifetime?: string) {
  const wanted = lifetime === undefined ? undefined : parseDuration(lifetime, '--lifetime');
  return withStore('assignment', async (sql) => {
    if (wanted !== undefined)
      await sql`select assignment.set_declaration_lifetime(${wanted}::interval)`.catch((err) => {
        throw storeError(err);
      });
    const [s] = await sql`select lifetime::text as lifetime from assignment.freshness_setting`;
    const nodes =
      await sql`select node, serial, signed_at, expires_at, expired from assignment.declaration_freshness order by expires_at nulls first, node`;
    return { lifetime: s!.lifetime as string, changed: wanted !== undefined, nodes };
  });
}
