// `mesh node list` reads the same view a DBA would (inventory.node_status).
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { nodeName } from '../wire/names.js';
import { Accounts } from '../broker/accounts.js';
import { readBroker } from '../home/home.js';
import { management } from '../broker/admin.js';
import { refuse } from '../sys/errors.js';

export async function nodeList() {
  return withStore('inventory', readNodeStatus);
}

/** The rows `mesh node list` prints, on a store already open (the console reads them too, so both say the same). */
export function readNodeStatus(sql: Sql) {
  return sql`select name, site, state, stale, holds_until, last_seen, enrolled_at, reported_serial, holds, failing, reported_at,
                            case when reported_at is null then 'never reported' else inventory.describe_age(report_age) end as report_age,
                            -- The newest declaration not yet delivered, read through the view assignment grants inventory (W1).
                            (select max(p.serial) from assignment.pending_delivery p where p.node = s.name and p.kind = 'declaration') as owed_serial
                       from inventory.node_status s order by name`;
}

export async function nodeRetire(name: string) {
  nodeName(name);
  await new Accounts(management(readBroker())).retire(name);
  return withStore('inventory', async (sql) => {
    const rows = await sql`select inventory.retire_node(${name}) as gone`;
    if (!rows[0]?.gone) throw refuse('MSH18', `no node named ${name}`);
    return { retired: name };
  });
}
