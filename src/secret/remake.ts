// The secrets this context placed itself (not a provision's pair): made again
// for every holder whose sealing key changed or that newly holds one (S3, S4).
// The mesh cannot read what it holds, so it cannot seal the old value to the
// new key: it makes a new value for every holder. Sending is W2's one step's
// (src/provision/redeclare.ts), one push with the pairs made again.
// An accepted secret is refused by secret.put_made with the remedy: issue it again.
import { withStore } from '../store/with_store.js';
import { makeSealed } from './value.js';
import { sealingKeys } from './keys.js';
import { missingQueues } from './queues.js';
import { storeError, refuse } from '../sys/errors.js';

export interface RemadeHeld {
  made: { secret: string; generation: number; holders: string[] }[];
  refused: { secret: string; reason: string }[];
}

/** Every stale secret placed by this context, or with HOLDERS only those these nodes have no current copy of. */
export function remakeHeld(holders?: string[]): Promise<RemadeHeld> {
  const out: RemadeHeld = { made: [], refused: [] };
  return withStore('secret', async (ssql) => {
    // Secrets placed by this context: the same holders, those still enrolled.
    const own = await ssql`select secret, array_agg(holder order by holder) as holders from secret.held
                            where path is not null group by secret
                           having bool_or(not current and (${holders ?? null}::text[] is null or holder = any(${holders ?? null}::text[]))) order by secret`;
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
    return out;
  });
}
