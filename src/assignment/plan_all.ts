// `mesh plan --all`: what the next declarations change across the fleet,
// against what each node last acknowledged, grouped so 10,000 nodes read as
// a few lines; --json gives every node's detail. Both from SQL
// (assignment.plan_summary, assignment.plan_changes: sql/assignment/0016).
import { withStore } from '../store/with_store.js';

export interface PlanGroup {
  nodes: number;
  changes: string[];
  sample: string[];
}
export interface NodePlan {
  node: string;
  changes: { id: string; change: string }[];
}

export function planSummary(): Promise<PlanGroup[]> {
  return withStore('assignment', async (sql) => {
    // Addresses first, as a declare would: a new node's composition carries its interface.
    await sql`select overlay.allocate_addresses()`;
    return (await sql`select nodes, changes, sample from assignment.plan_summary()`).map((r) => ({
      nodes: Number(r.nodes),
      changes: r.changes as string[],
      sample: r.sample as string[],
    }));
  });
}

export function planNodes(): Promise<NodePlan[]> {
  return withStore('assignment', async (sql) => {
    await sql`select overlay.allocate_addresses()`;
    return (await sql`select node, jsonb_agg(jsonb_build_object('id', id, 'change', change) order by id, change) as changes
                        from assignment.plan_changes() group by node order by node`) as unknown as NodePlan[];
  });
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
