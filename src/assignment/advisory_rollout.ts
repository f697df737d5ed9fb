// `mesh advisories rollout ID`: the fix of an advisory declared to exactly the
// nodes it lists, as one rollout in waves. assignment.pin_advisory pins each
// listed node's package at the fixed version; the pin is composed into that
// node's declaration as a package resource, so the nodes whose composition
// changed (W2) are the rollout's, and no other.
import { rolloutOf, type StartOptions } from './rollout.js';

/** Declare each node an advisory lists the version that fixes it, as a rollout in waves (assignment.pin_advisory). */
export async function rolloutAdvisory(advisory: string, o: StartOptions) {
  const { made, step } = await rolloutOf(o, (sql) =>
    sql`select node, name, version from assignment.pin_advisory(advisory_id => ${advisory}::text)`.then((rows) =>
      rows.map((r) => ({ node: r.node as string, name: r.name as string, version: r.version as string })),
    ),
  );
  return { advisory, pinned: made, ...step };
}
