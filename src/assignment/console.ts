// What the console shows of declarations, read from the same view
// a DBA reads (assignment.declaration_status) and the one composing function
// (assignment.compose), so the console never says something plan would not.
import type { Sql } from '../store/connect.js';

/** Per node (of every node, or of NAMES: one page of the fleet): the newest serial declared and the newest the node reported applied. */
export async function readSerials(
  sql: Sql,
  names?: string[],
): Promise<Map<string, { declared: number; applied: number | null }>> {
  const rows = await sql<{ node: string; declared: bigint; applied: bigint | null }[]>`
    select node, max(serial) as declared, max(serial) filter (where state = 'applied') as applied
      from assignment.declaration_status where (${names ?? null}::text[] is null or node = any(${names ?? null}::text[]))
     group by node`;
  return new Map(
    rows.map((r) => [r.node, { declared: Number(r.declared), applied: r.applied === null ? null : Number(r.applied) }]),
  );
}

/** One node's composition now (what its next declaration carries) and its last declarations with what became of each. */
export async function readNodeDeclarations(sql: Sql, node: string) {
  const resources = await sql<{ id: string; kind: string }[]>`select id, kind from assignment.composition_of(${node})`;
  const history = await sql<
    { serial: bigint; state: string; issued_at: Date; acknowledged_at: Date | null; superseded_at: Date | null }[]
  >`
    select serial, state, issued_at, acknowledged_at, superseded_at from assignment.declaration_status
     where node = ${node} order by serial desc limit 20`;
  return {
    resources: resources.map((r) => ({ id: r.id, kind: r.kind })),
    history: history.map((h) => ({ ...h, serial: Number(h.serial) })),
  };
}
