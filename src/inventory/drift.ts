// `mesh drift`: what hosts keep putting back, from inventory.drift. A resource
// put back more often in an hour than the setting allows is fighting
// something on its machine: a cron job or another tool that keeps changing it.
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { refuse } from '../sys/errors.js';

export async function driftList() {
  return withStore('inventory', (sql) => readDrift(sql));
}

/** The rows `mesh drift` prints, on a store already open, of every node or of NODE (the console's node page reads them too). */
export function readDrift(sql: Sql, node?: string) {
  return sql`select node, resource, last_hour, times, last_at, fighting, fighting_after
    from inventory.drift where (${node ?? null}::text is null or node = ${node ?? null}::text)
    order by fighting desc, last_hour desc, node, resource`;
}

export async function setFightingAfter(times: number) {
  if (!Number.isSafeInteger(times) || times < 1)
    throw refuse('MSH17', `${times} is not a number of times`, 'give a whole number above 0');
  return withStore('inventory', async (sql) => {
    const [r] = await sql<
      { fighting_after: number }[]
    >`select inventory.set_fighting_after(times => ${times}::integer) as fighting_after`;
    return { fighting_after: r!.fighting_after };
  });
}
