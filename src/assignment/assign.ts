// `mesh assign` / `mesh unassign`: which module runs where, from the next
// declaration on.
import { connect } from '../store/connect.js';
import { storeError } from '../store/errors.js';

export async function assign(module: string, node: string, on: boolean) {
  const sql = await connect('assignment', { max: 1 });
  try {
    const [row] = on
      ? await sql`select assignment.assign(${module}, ${node}) as changed`
      : await sql`select coalesce(assignment.unassign(${module}, ${node}), false) as changed`;
    return { module, node, assigned: on, changed: Boolean(row!.changed) };
  } catch (err) { throw storeError(err); } finally { await sql.end(); }
}
