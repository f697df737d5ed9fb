// `mesh plan --all`: what the next declarations change across the fleet,
// against what each node last acknowledged, grouped so 10,000 nodes read as
// a few lines; --json gives every node's detail. Both from SQL
// (assignment.plan_summary, assignment.plan_changes: sql/assignment/0016),
// a large fleet's in parts at once.
import type postgres from 'postgres';
import { withStore } from '../store/with_store.js';
import { composeInParts, partsFor, COMPOSE_PARTS, type Tx } from './compose_parts.js';
import type { Sql } from '../store/connect.js';

export interface PlanGroup {
  nodes: number;
  changes: string[];
  sample: string[];
}
export interface NodePlan {
  node: string;
  changes: { id: string; change: string }[];
}

type Part = (
  q: Sql | Tx | postgres.ReservedSql<Record<string, never>>,
  nodes: string[] | null,
) => Promise<postgres.Row[]>;

/**
 * PART's rows for every enrolled node, the fleet split in parts that read
 * one snapshot (compose_parts.ts): composing is most of a plan, and one
 * statement runs on one core. Each part is a contiguous range of the sorted
 * names, so the parts in order read as the whole in order.
 */
function acrossFleet(part: Part): Promise<postgres.Row[][]> {
  return withStore(
    'assignment',
    async (sql) => {
      // Addresses first, as a declare would: a new node's composition carries its interface.
      await sql`select overlay.allocate_addresses()`;
      return sql.begin('isolation level repeatable read read only', async (tx) => {
        const names = (await tx`select name from inventory.enrolled_node order by name`).map((r) => r.name as string);
        const parts = partsFor(names.length);
        if (parts === 1) return [await part(tx, null)];
        return composeInParts(tx, sql, names, parts, part, async (rows) => [rows]);
      });
    },
    { max: 1 + COMPOSE_PARTS },
  );
}

const byChanges = (a: string[], b: string[]) => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return a.length - b.length;
};

export async function planSummary(): Promise<PlanGroup[]> {
  const parts = await acrossFleet(
    (q, names) => q`select nodes, changes, sample from assignment.plan_summary(${names}::text[])`,
  );
  // Each part's groups merged by their exact list of changes; a part's sample is its first five by name.
  const groups = new Map<string, PlanGroup>();
  for (const r of parts.flat()) {
    const changes = r.changes as string[];
    const key = changes.join('\n');
    const g = groups.get(key) ?? groups.set(key, { nodes: 0, changes, sample: [] }).get(key)!;
    g.nodes += Number(r.nodes);
    g.sample = [...g.sample, ...(r.sample as string[])].slice(0, 5);
  }
  return [...groups.values()].sort((a, b) => b.nodes - a.nodes || byChanges(a.changes, b.changes));
}

export async function planNodes(): Promise<NodePlan[]> {
  const parts = await acrossFleet(
    (
      q,
      names,
    ) => q`select node, jsonb_agg(jsonb_build_object('id', id, 'change', change) order by id, change) as changes
                      from assignment.plan_changes(${names}::text[]) group by node order by node`,
  );
  return parts.flat() as unknown as NodePlan[];
}

/** "9,800 nodes: file:/etc/app.conf changed, service:app restarts (web1, web2, ...)". */
export function describeGroups(groups: PlanGroup[]): string {
  if (groups.length === 0) return 'every node runs its next declaration already: nothing would change';
  return groups
    .map(
      (g) =>
        `${g.nodes.toLocaleString('en')} node${g.nodes === 1 ? '' : 's'}: ${g.changes.join(', ')} (${g.sample.join(', ')}${g.nodes > g.sample.length ? ', ...' : ''})`,
    )
    .join('\n');
}
