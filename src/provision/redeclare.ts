// W2's one step, taken after every change that can alter compositions (an
// operator command, an enrolment, a rekey, a settled rotation, the bundle,
// the lab): first, a secret some holder has no current copy of (a module newly
// placed on a node, a machine back with a new sealing key) is made again for
// every holder (S3: the mesh cannot read the old value to seal it to the
// newcomer); then every node whose composition now differs from what it was
// last declared is declared again, and no other, so both ends and the new
// holder learn it in the same push. Every caller goes through here, so none
// can declare a change and forget the secrets it made stale.
// It lives in provision, the context above secret and assignment, because
// making a pair's credential again needs both, and arrows only run down.
import type { Sql } from '../store/connect.js';
import type { Signer } from '../home/home.js';
import { declareChanged, type Declared } from '../assignment/declare.js';
import { remake, type Remade } from './remake.js';
import { windowOf } from '../secret/window.js';

export interface Redeclared {
  /** Who was declared again (owed in the outbox: W1). */
  redeclared: Declared[];
  /** Secrets made again; a pair's credential says its window. */
  remade: { secret: string; generation: number; holders: string[]; window?: string }[];
  /** Secrets a holder has no current copy of that could not be made again, each with its reason. */
  notRemade: Remade['refused'];
  /** Changed nodes a rollout holds: not declared now. */
  held: string[];
}

export interface RedeclareOptions {
  /** Make again only what these nodes have no current copy of; [] makes nothing; absent, every stale secret. */
  holders?: string[];
  /** A caller's connection to the assignment store (serve's), else one of our own. */
  sql?: Sql;
  signer?: Signer;
  /** The modules whose content changed: only their nodes, and the holders of what was made again, are composed (W2). */
  modules?: string[];
}

const NONE: Remade = { pairs: [], made: [], refused: [] };

/** Who holds what was made again: their compositions changed with it. */
const holdersOf = (r: Remade) => [
  ...r.pairs.flatMap((p) => p.holders.map((h) => h.node)),
  ...r.made.flatMap((m) => m.holders),
];

/** Make again what is stale, then declare every node whose composition changed. */
export async function redeclare(opts: RedeclareOptions = {}): Promise<Redeclared> {
  const r = opts.holders?.length === 0 ? NONE : await remake(opts.holders);
  let held: string[] = [];
  const redeclared = await declareChanged({
    sql: opts.sql,
    signer: opts.signer,
    scope: opts.modules && { modules: opts.modules, nodes: holdersOf(r) },
    onHeld: (nodes) => {
      held = nodes;
    },
  });
  const pairs = r.pairs
    .map((p) => ({
      secret: p.secret,
      generation: p.generation,
      holders: p.holders.map((h) => h.node),
      window: windowOf(p, redeclared),
    }))
    .reverse();
  return { redeclared, remade: [...pairs, ...r.made], notRemade: r.refused, held };
}
