// `mesh node show NODE --at TIME` and `mesh diff [NODE] --from FROM --to TO`:
// what a node was declared, and had reported applied, at a time, and what
// changed between two, from the declarations mesh keeps
// (sql/assignment/0071-history.sql). The diff is grouped as mesh plan --all
// groups it, and printed by the same describeGroups.
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { refuse } from '../sys/errors.js';
import { nodeName } from '../wire/names.js';
import type { NodePlan, PlanGroup } from './plan_all.js';

export interface NodeAt {
  node: string;
  at: Date;
  declared: { serial: number; issuedAt: Date; resources: { id: string; kind: string }[] } | null;
  applied: { serial: number; at: Date; resources: { id: string; kind: string }[] } | null;
}

export function nodeAt(node: string, at: string): Promise<NodeAt> {
  return withStore('assignment', (sql) => readNodeAt(sql, node, at));
}

/** The same as the console reads it, on the store it is handed. */
export async function readNodeAt(sql: Sql, node: string, at: string): Promise<NodeAt> {
  nodeName(node);
  const [t] = await sql`select assignment.time_of(${at}::text) as at`;
  const [r] = await sql`select * from assignment.declared_at(array[${node}]::text[], ${t!.at}::timestamptz)`;
  if (!r) throw refuse('MSHQ7', `no declaration of a node named ${node} is kept`);
  return {
    node,
    at: t!.at as Date,
    declared: r.serial ? { serial: Number(r.serial), issuedAt: r.issued_at as Date, resources: r.resources } : null,
    applied: r.applied_serial
      ? { serial: Number(r.applied_serial), at: r.applied_at as Date, resources: r.applied_resources }
      : null,
  };
}

export interface Diff {
  from: Date;
  to: Date;
  groups: PlanGroup[];
  nodes: NodePlan[];
}

/** What NODE (or every node) was declared differently at TO than at FROM. */
export function diff(node: string | undefined, from: string, to: string): Promise<Diff> {
  return withStore('assignment', (sql) => readDiff(sql, node, from, to));
}

/** The same as the console reads it, on the store it is handed. */
export async function readDiff(sql: Sql, node: string | undefined, from: string, to: string): Promise<Diff> {
  if (node !== undefined) nodeName(node);
  const [t] = await sql`select assignment.time_of(${from}::text) as from, assignment.time_of(${to}::text) as to`;
  const names = node === undefined ? null : [node];
  if (node !== undefined && (await sql`select 1 from assignment.node_serial where node = ${node}`).length === 0)
    throw refuse('MSHQ7', `no declaration of a node named ${node} is kept`);
  const groups = (
    await sql`select nodes, changes, sample from assignment.declared_changes_summary(${names}::text[], ${t!.from}::timestamptz, ${t!.to}::timestamptz)`
  ).map((r) => ({ nodes: Number(r.nodes), changes: r.changes as string[], sample: r.sample as string[] }));
  const nodes =
    (await sql`select node, jsonb_agg(jsonb_build_object('id', id, 'change', change) order by id, change) as changes
                        from assignment.declared_changes(${names}::text[], ${t!.from}::timestamptz, ${t!.to}::timestamptz)
                       group by node order by node`) as unknown as NodePlan[];
  return { from: t!.from as Date, to: t!.to as Date, groups, nodes };
}
