// A rotation settles by itself (S5): when the last holder of a
// pair's credential acknowledged the newest generation, the provider's
// composition no longer carries the earlier ones (sql/provision/0004), so W2
// owes it a declaration, made here with no operator command, and then the
// earlier copies are forgotten. Called by serve's report handler after it
// recorded an acknowledgement; one index probe when no rotation is in flight.
// Declared first, forgotten after: a failure in between leaves the rotation
// found again at the next report, never a provider left holding the old.
import type { Sql } from '../store/connect.js';
import type { Signer } from '../home/home.js';
import type { Declared } from '../assignment/declare.js';
import { redeclare } from './redeclare.js';

export interface Settled {
  secret: string;
  generation: number;
  redeclared: Declared[];
}

export async function settle(
  stores: { provision: Sql; assignment: Sql; secret: Sql },
  signer: Signer,
  node: string,
): Promise<Settled[]> {
  const rows = await stores.provision`select secret, settled from provision.settled_by(${node})`;
  if (rows.length === 0) return [];
  // W2's one step; a settling leaves no holder without a current copy, so nothing is made again.
  const { redeclared } = await redeclare({ sql: stores.assignment, signer, holders: [] });
  for (const r of rows)
    await stores.secret`select secret.forget_earlier(${r.secret as string}, ${r.settled as number})`;
  return rows.map((r) => ({ secret: r.secret as string, generation: Number(r.settled), redeclared }));
}
