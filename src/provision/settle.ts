// A rotation settles by itself (S5): when the last holder of a
// pair's credential acknowledged the newest generation, the provider's
// composition no longer carries the earlier ones (sql/provision/0004), so W2
// owes it a declaration, made here with no operator command, and then the
// earlier copies are forgotten. Called by serve's report handler after it
// recorded an acknowledgement; one index probe a node when no rotation is in
// flight, for the nodes acknowledging together in one statement.
// Declared first, forgotten after: a failure in between leaves the rotation
// found again at the next report, never a provider left holding the old.
import type { Sql } from '../store/connect.js';
import type { Signer } from '../home/home.js';
import type { Declared } from '../assignment/declare.js';
import { redeclare } from './redeclare.js';
import { Coalescer } from '../sys/coalesce.js';

export interface Settled {
  secret: string;
  generation: number;
  redeclared: Declared[];
}

/**
 * The rotations NODE's acknowledgement settles, each settled: found for every
 * node acknowledging at once in one statement (after a declaration the whole
 * fleet acknowledges together), then declared and forgotten node by node.
 */
export function settler(
  stores: { provision: Sql; assignment: Sql; secret: Sql },
  signer: Signer,
  max = 64,
): (node: string) => Promise<Settled[]> {
  const found = new Coalescer<string, { secret: string; settled: number }[]>(async (nodes) => {
    const rows = await stores.provision`select n.i, s.secret, s.settled
      from unnest(${nodes}::text[]) with ordinality as n(node, i), provision.settled_by(n.node) s`;
    const each = nodes.map(() => [] as { secret: string; settled: number }[]);
    for (const r of rows) each[Number(r.i) - 1]!.push({ secret: r.secret as string, settled: r.settled as number });
    return each;
  }, max);
  return async (node) => {
    const rows = await found.submit(node);
    if (rows.length === 0) return [];
    // W2's one step; a settling leaves no holder without a current copy, so nothing is made again.
    const { redeclared } = await redeclare({ sql: stores.assignment, signer, holders: [] });
    for (const r of rows) await stores.secret`select secret.forget_earlier(${r.secret}, ${r.settled})`;
    return rows.map((r) => ({ secret: r.secret, generation: Number(r.settled), redeclared }));
  };
}
