// `mesh assign` / `mesh unassign`: which module runs where, from the next
// declaration on.
import { withStore } from '../store/with_store.js';

export async function assign(module: string, node: string, on: boolean) {
  return withStore('assignment', async (sql) => {
    const [row] = on
      ? await sql`select assignment.assign(${module}, ${node}) as changed`
      : await sql`select coalesce(assignment.unassign(${module}, ${node}), false) as changed`;
    return { module, node, assigned: on, changed: Boolean(row!.changed) };
  });
}
