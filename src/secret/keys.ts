// The sealing keys the mesh knows, read from inventory.enrolled_node (granted
// to the secret context): the only keys anything is sealed to.
import type { Sql } from '../store/connect.js';
import type { Holder } from './value.js';

/** The holders among `nodes` that are enrolled, with their current sealing keys. */
export async function sealingKeys(sql: Sql, nodes: string[]): Promise<Holder[]> {
  const rows = await sql`select name, encode(sealing_key, 'hex') as key from inventory.enrolled_node
                          where name = any(${nodes}::text[]) and sealing_key is not null order by name`;
  return rows.map((r) => ({ node: r.name as string, sealingKey: r.key as string }));
}
