// `mesh secret remake` (S3, S4): make again every secret some holder has no
// current copy of -- its sealing key changed (a rejoined machine), or it newly
// runs a module that holds one. The mesh cannot read what it holds, so it
// cannot seal the old value to the new key: it makes a new value for every
// holder, and both ends learn it in the same push (every node whose
// composition changed, declared at once).
// An accepted secret is refused by secret.put_made with the remedy: issue it again.
import { withStore } from '../store/with_store.js';
import { declareChanged, type Declared } from '../assignment/declare.js';
import { prepare, staleCredentials, type Made } from '../provision/credential.js';
import { storePair } from './store_pair.js';
import { makeSealed } from './value.js';
import { sealingKeys } from './keys.js';
import { missingQueues } from './queues.js';
import { storeError, refuse } from '../sys/errors.js';
import { windowOf } from './window.js';
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
  const out: Remade = { made: [], refused: [], sent: [] };
  for (const p of await staleCredentials(opts.holder)) {
    try {
      pairs.push(await storePair(await prepare(p.provision, p.consumer)));
    } catch (err) {
      out.refused.push({ secret: p.secret, reason: (err as Error).message });
    }
  }
  await withStore('secret', async (ssql) => {
    // Secrets placed by this context: the same holders, those still enrolled.
    const own = await ssql`select secret, array_agg(holder order by holder) as holders from secret.held
                            where path is not null group by secret
                           having bool_or(not current and (${opts.holder ?? null}::text is null or holder = ${opts.holder ?? null}::text)) order by secret`;
    for (const s of own) {
      try {
        const holders = await sealingKeys(ssql, s.holders as string[]);
        const gone = await missingQueues(holders.map((h) => h.node));
        if (gone?.length) throw refuse('MSHQ0', `cannot resolve ${gone.join(', ')}: no queue on the broker`);
        const sealed = makeSealed(holders);
        const [row] =
          await ssql`select secret.put_made(secret_name => ${s.secret as string}::text, holders => ${sealed.holders}::text[],
                                   sealed_to => ${sealed.keys}::text[], blobs => ${sealed.blobs}::text[]) as generation`.catch(
            (err) => {
              throw storeError(err);
            },
          );
        out.made.push({ secret: s.secret as string, generation: Number(row!.generation), holders: sealed.holders });
      } catch (err) {
        out.refused.push({ secret: s.secret as string, reason: (err as Error).message });
      }
    }
  });
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
