// `mesh outbox`: what the control plane owes each node and has not yet had
// confirmed by the broker (W1), read from assignment.pending_delivery.
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { freezeHolds } from './freeze.js';

const owedRows = (sql: Sql) => sql`select node, kind, serial, owed_since, attempts, last_error, next_attempt_at
                                     from assignment.pending_delivery order by owed_since, node, serial`;

export function outbox() {
  return withStore('assignment', owedRows);
}

/**
 * `mesh plan` with no node: what is pending, fleet-wide. CHANGED are the nodes
 * whose composition differs from their newest declaration (W2): a command owes
 * them at once, so a name here is a change nothing declared yet (mesh declare
 * --all --changed owes them), or one a change-freeze window holds (FROZEN says
 * which window and until when). OWED is what is declared and not yet delivered.
 */
export function pending() {
  return withStore('assignment', async (sql) => {
    // Addresses first, as a declare would: a new node's composition carries its interface.
    await sql`select overlay.allocate_addresses()`;
    const changed = (await sql`select node from assignment.affected_nodes()`).map((r) => r.node as string);
    return { changed, frozen: await freezeHolds(sql), owed: await owedRows(sql) };
  });
}
