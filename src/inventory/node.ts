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
  return sql`select s.name, site, state, stale, holds_until, last_seen, enrolled_at, reported_serial, holds, failing, reported_at, s.agent_version,
                            case when reported_at is null then 'never reported' else inventory.describe_age(report_age) end as report_age,
                            -- The newest declaration not yet delivered, read through the view assignment grants inventory (W1).
                            (select max(p.serial) from assignment.pending_delivery p where p.node = s.name and p.kind = 'declaration') as owed_serial,
                            v.outdated, v.why as agent_why
                       from inventory.node_status s join inventory.agent_versions v on v.name = s.name order by s.name`;
}

/** The nodes inventory.agent_versions calls outdated (V1): outside the skew rule, behind the control plane, or reporting no version. */
export async function nodeOutdated() {
  return withStore(
    'inventory',
    (sql) => sql`select name, agent_version, control_version, speaks, behind, why
                   from inventory.agent_versions where outdated order by name`,
  );
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
