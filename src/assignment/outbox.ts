// `mesh outbox`: what the control plane owes each node and has not yet had
// confirmed by the broker (W1), read from assignment.pending_delivery.
import { withStore } from '../store/with_store.js';

export function outbox() {
  return withStore('assignment', (sql) => sql`select node, kind, serial, owed_since, attempts, last_error, next_attempt_at
                                                 from assignment.pending_delivery order by owed_since, node, serial`);
}
