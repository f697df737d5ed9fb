// Advisories in the OSV format, loaded from a file (nothing is fetched), and
// the nodes running a version one says is affected: inventory.load_advisory
// reads the document, inventory.advisory_node is the answer, in SQL a DBA can
// run as it is.
import { readFileSync } from 'node:fs';
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { refuse } from '../sys/errors.js';

/** Load every OSV document of FILE (one document, or a list of them) in one transaction. */
export async function loadAdvisories(path: string) {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw refuse('MSHO3', `${path} is not a JSON file of OSV advisories (${(err as Error).message})`);
  }
  const docs = Array.isArray(v) ? v : [v];
  return withStore('inventory', (sql) =>
    sql.begin(async (tx) => {
      const loaded: { id: string; ranges: number }[] = [];
      for (const d of docs) {
        const [r] = await tx`select inventory.load_advisory(doc => ${tx.json(d as never)}::jsonb) as ranges`;
        loaded.push({ id: String((d as { id?: unknown }).id), ranges: r!.ranges as number });
      }
      return loaded;
    }),
  );
}

/** Each node running an affected version, of every advisory loaded or of ADVISORY. */
export function affectedNodes(advisory?: string) {
  return withStore('inventory', (sql) => readAffected(sql, advisory));
}

export function readAffected(sql: Sql, advisory?: string) {
  return sql`select advisory, node, name, arch, version, fixed from inventory.advisory_node
    where (${advisory ?? null}::text is null or advisory = ${advisory ?? null}::text)
    order by advisory, node, name, arch`;
}
