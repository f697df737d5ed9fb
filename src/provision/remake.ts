// `mesh secret remake` (S3, S4): make again every secret some holder has no
// current copy of -- its sealing key changed (a rejoined machine), or it newly
// runs a module that holds one: the pairs' credentials (made here, where a
// pair is known) and the secrets the secret context placed itself
// (src/secret/remake.ts). Both ends learn a new value in the same push (every
// node whose composition changed, declared at once).
import { declareChanged, type Declared } from '../assignment/declare.js';
import { prepare, staleCredentials } from './credential.js';
import { storePair, type Made } from '../secret/store_pair.js';
import { remakeHeld } from '../secret/remake.js';
import { windowOf } from '../secret/window.js';
import type { Signer } from '../home/home.js';

export interface Remade {
  made: { secret: string; generation: number; holders: string[]; window?: string }[];
  refused: { secret: string; reason: string }[];
  sent: Declared[];
}

/**
 * Every stale secret, or with HOLDER only those that node has no current copy
 * of (serve, when a node rejoins with new keys: S3 with no command typed).
 */
export async function remake(
  opts: { holder?: string; signer?: Signer; onHeld?: (nodes: string[]) => void } = {},
): Promise<Remade> {
  const pairs: Made[] = [];
  const refused: Remade['refused'] = [];
  for (const p of await staleCredentials(opts.holder)) {
    try {
      pairs.push(await storePair(await prepare(p.provision, p.consumer)));
    } catch (err) {
      refused.push({ secret: p.secret, reason: (err as Error).message });
    }
  }
  const held = await remakeHeld(opts.holder);
  const out: Remade = { made: held.made, refused: [...refused, ...held.refused], sent: [] };
  // Every holder of what was made is now behind its composition, both ends alike: one push for all (W2).
  if (pairs.length || out.made.length) out.sent = await declareChanged({ signer: opts.signer, onHeld: opts.onHeld });
  for (const p of pairs)
    out.made.unshift({
      secret: p.secret,
      generation: p.generation,
      holders: p.holders.map((h) => h.node),
      window: windowOf(p, out.sent),
    });
  return out;
}
