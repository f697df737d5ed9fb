// Making again what is stale (S3, S4): every secret some holder has no
// current copy of -- its sealing key changed (a rejoined machine), or it newly
// runs a module that holds one: the pairs' credentials (made here, where a
// pair is known) and the secrets the secret context placed itself
// (src/secret/remake.ts). Nothing is declared here: W2's one step
// (./redeclare.ts) declares every node whose composition changed right after,
// so both ends learn a new value in the same push.
import { prepare, staleCredentials } from './credential.js';
import { storePair, type Made } from '../secret/store_pair.js';
import { remakeHeld } from '../secret/remake.js';

export interface Remade {
  /** Pair credentials made again (their window is stated once they are declared). */
  pairs: Made[];
  /** Secrets the secret context placed, made again. */
  made: { secret: string; generation: number; holders: string[] }[];
  refused: { secret: string; reason: string }[];
}

/**
 * Every stale secret, or with HOLDERS only those these nodes have no current
 * copy of (serve, when a node rejoins with new keys: S3 with no command typed).
 */
export async function remake(holders?: string[]): Promise<Remade> {
  const pairs: Made[] = [];
  const refused: Remade['refused'] = [];
  for (const p of await staleCredentials(holders)) {
    try {
      pairs.push(await storePair(await prepare(p.provision, p.consumer)));
    } catch (err) {
      refused.push({ secret: p.secret, reason: (err as Error).message });
    }
  }
  const held = await remakeHeld(holders);
  return { pairs, made: held.made, refused: [...refused, ...held.refused] };
}
