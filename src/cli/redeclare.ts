// W2 at the end of every command that changes state: the nodes whose
// composition now differs from what they were last declared are owed a new
// declaration (declareChanged), and the command says which. First, a secret
// some holder has no current copy of (a module newly placed on a node) is made
// again for every holder (S3: the mesh cannot read the old value to seal it to
// the newcomer), so both ends and the new holder learn it in the same push.
import { declareChanged, type Declared } from '../assignment/declare.js';
import { remake, type Remade } from '../provision/remake.js';

export interface Redeclared {
  redeclared: Declared[];
  remade?: Remade['made'];
  notRemade?: Remade['refused'];
  held?: string[];
}

/** RESULT with the declarations it made owed (and the changes a rollout holds), for printing and --json. */
export async function redeclare<T extends object>(result: T): Promise<T & Redeclared> {
  let held: string[] = [];
  const onHeld = (nodes: string[]) => {
    held = nodes;
  };
  const r = await remake({ onHeld });
  const redeclared = r.made.length ? r.sent : await declareChanged({ onHeld });
  return {
    ...result,
    redeclared,
    ...(r.made.length ? { remade: r.made } : {}),
    ...(r.refused.length ? { notRemade: r.refused } : {}),
    ...(held.length ? { held } : {}),
  };
}

export const redeclareLine = (d: Declared[], r: Omit<Redeclared, 'redeclared'> = {}) =>
  [
    ...(r.remade ?? []).map(
      (m) =>
        `made ${m.secret} again (generation ${m.generation}) for ${m.holders.join(', ')}: a holder had no current copy`,
    ),
    ...(r.notRemade ?? []).map((m) => `not made again: ${m.secret}: ${m.reason}`),
    d.length
      ? `re-declaring ${d.map((x) => x.node).join(', ')}`
      : r.held?.length
        ? 'nothing re-declared now'
        : "no node's composition changed: nothing to re-declare",
    ...(r.held?.length
      ? [
          `held by the rollout: ${r.held.length > 10 ? `${r.held.slice(0, 10).join(', ')} and ${r.held.length - 10} more` : r.held.join(', ')} (mesh plan --all shows the change; mesh rollout start releases it)`,
        ]
      : []),
  ].join('\n');
