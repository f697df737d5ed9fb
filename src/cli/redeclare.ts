// What a command that changed state says about W2's one step
// (src/provision/redeclare.ts): the secrets it made again, the nodes it
// re-declared, the changes a rollout holds.
import { redeclare, type Redeclared } from '../provision/redeclare.js';
import type { Declared } from '../assignment/declare.js';
import { withStore } from '../store/with_store.js';
import { freezeHolds, holdLine, type FreezeHold } from '../assignment/freeze.js';

type Shown = { redeclared: Declared[]; frozen?: FreezeHold[] } & Partial<Omit<Redeclared, 'redeclared'>>;

/** RESULT with W2's step taken after it, for printing and --json (empty lists left out); MODULES: a change to these alone. */
export async function afterChange<T extends object>(result: T, modules?: string[]): Promise<T & Shown> {
  const r = await redeclare({ modules });
  // A held change is a freeze's (said with its window and end) or else the rollout's.
  const frozen = r.held.length ? await withStore('assignment', (sql) => freezeHolds(sql, r.held)) : [];
  const byFreeze = new Set(frozen.flatMap((f) => f.nodes));
  const held = r.held.filter((n) => !byFreeze.has(n));
  return {
    ...result,
    redeclared: r.redeclared,
    ...(r.remade.length ? { remade: r.remade } : {}),
    ...(r.notRemade.length ? { notRemade: r.notRemade } : {}),
    ...(held.length ? { held } : {}),
    ...(frozen.length ? { frozen } : {}),
  };
}

export const redeclareLine = (d: Declared[], r: Omit<Shown, 'redeclared'> = {}) =>
  [
    ...(r.remade ?? []).map(
      (m) =>
        `made ${m.secret} again (generation ${m.generation}) for ${m.holders.join(', ')}: a holder had no current copy`,
    ),
    ...(r.notRemade ?? []).map((m) => `not made again: ${m.secret}: ${m.reason}`),
    d.length
      ? `re-declaring ${d.map((x) => x.node).join(', ')}`
      : r.held?.length || r.frozen?.length
        ? 'nothing re-declared now'
        : "no node's composition changed: nothing to re-declare",
    ...(r.held?.length
      ? [
          `held by the rollout: ${r.held.length > 10 ? `${r.held.slice(0, 10).join(', ')} and ${r.held.length - 10} more` : r.held.join(', ')} (mesh plan --all shows the change; mesh rollout start releases it)`,
        ]
      : []),
    ...(r.frozen ?? []).map(
      (h) => `${holdLine(h)} (it goes out when the window ends; mesh freeze override sends it now)`,
    ),
  ].join('\n');
