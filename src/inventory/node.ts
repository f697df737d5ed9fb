// `mesh node list` reads what a DBA would (inventory.fleet_page over inventory.node_status).
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { nodeName } from '../wire/names.js';
import { Accounts } from '../broker/accounts.js';
import { readBroker } from '../home/home.js';
import { management } from '../broker/admin.js';
import { refuse } from '../sys/errors.js';

/** What narrows a fleet listing: the rows after a name, at most so many, by name prefix, site and state class (here, wedged, away, never, stale). */
export interface FleetFilter {
  after?: string;
  limit?: number;
  prefix?: string;
  site?: string;
  state?: string;
}

/** A page size as typed (--limit, ?limit=): a whole number, or refused before any query (MSHT5); its range is SQL's to judge (MSHT3). */
export function pageLimit(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,9}$/.test(raw))
    throw refuse(
      'MSHT5',
      `a page size of ${JSON.stringify(raw)} is not a whole number`,
      'give a page size from 1 to 1000',
    );
  return Number(raw);
}

export async function nodeList(f: FleetFilter = {}) {
  return withStore('inventory', (sql) => readNodeStatus(sql, f));
}

/**
 * The rows `mesh node list` prints, on a store already open: inventory.fleet_page, node_status with the
 * declaration owed and the agent's standing, one page or (with no limit) every node. The console reads
 * the same function, so both say the same.
 */
export function readNodeStatus(sql: Sql, f: FleetFilter = {}) {
  return sql`select * from inventory.fleet_page(after_name => ${f.after ?? null}::text, page_size => ${f.limit ?? null}::int,
                                                name_prefix => ${f.prefix ?? null}::text, site_name => ${f.site ?? null}::text,
                                                state_class => ${f.state ?? null}::text)`;
}

/** How many nodes are in each state, and how many pass F's prefix, site and state (inventory.fleet_counts). */
export async function readFleetCounts(sql: Sql, f: FleetFilter = {}) {
  const [r] = await sql<Record<'nodes' | 'here' | 'wedged' | 'away' | 'never' | 'stale' | 'matching', bigint>[]>`
    select * from inventory.fleet_counts(name_prefix => ${f.prefix ?? null}::text, site_name => ${f.site ?? null}::text,
                                         state_class => ${f.state ?? null}::text)`;
  return Object.fromEntries(Object.entries(r!).map(([k, v]) => [k, Number(v)])) as Record<keyof typeof r, number>;
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
