// `mesh node list` reads the same view a DBA would (inventory.node_status).
import { connect } from '../store/connect.js';
import { nodeName } from '../wire/names.js';
import { Accounts } from '../broker/accounts.js';
import { readBroker, management } from '../home/home.js';

export async function nodeList() {
  const sql = await connect('inventory', { max: 1 });
  try {
    return await sql`select name, site, state, last_seen, enrolled_at, reported_serial, holds, failing, reported_at,
                            case when reported_at is null then 'never reported' else inventory.describe_age(report_age) end as report_age
                       from inventory.node_status order by name`;
  } finally {
    await sql.end();
  }
}

export async function nodeRetire(name: string) {
  nodeName(name);
  await new Accounts(management(readBroker())).retire(name);
  const sql = await connect('inventory', { max: 1 });
  try {
    const rows = await sql`select inventory.retire_node(${name}) as gone`;
    if (!rows[0]?.gone) throw new Error(`no node named ${name}: see mesh node list.`);
    return { retired: name };
  } finally {
    await sql.end();
  }
}
