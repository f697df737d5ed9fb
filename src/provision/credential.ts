// One pair's credential (S5), made and stored in two steps so that everything
// which can refuse does so before the new value is committed: resolve every
// holder in SQL (provision.resolve_holders refuses an unenrolled one), find
// every holder's queue on the broker (when it answers: see src/secret/queues.ts),
// and only then seal; the secret context stores it (src/secret/store_pair.ts),
// checking the keys once more.
import type { Sql } from '../store/connect.js';
import { withStore } from '../store/with_store.js';
import { makeSealed } from '../secret/value.js';
import { missingQueues } from '../secret/queues.js';
import type { Prepared } from '../secret/store_pair.js';
import { storeError, refuse } from '../sys/errors.js';

export async function preparePair(psql: Sql, provision: string, consumer: string): Promise<Prepared> {
  let rows;
  try {
    rows =
      await psql`select node, sides, sealing_key, secret from provision.resolve_holders(provision_name => ${provision}::text, consumer_module => ${consumer}::text)`;
  } catch (err) {
    throw storeError(err);
  }
  const holders = rows.map((r) => ({ node: r.node as string, sides: r.sides as string[] }));
  const gone = await missingQueues(holders.map((h) => h.node));
  if (gone?.length) {
    throw refuse('MSHB2', `cannot resolve ${gone.join(', ')}: no queue on the broker, so it cannot be told`);
  }
  const sealed = makeSealed(rows.map((r) => ({ node: r.node as string, sealingKey: r.sealing_key as string })));
  return { provision, consumer, secret: rows[0]!.secret as string, holders, sealed, queuesChecked: gone !== undefined };
}

/** preparePair on its own connection to the provision store. */
export function prepare(provision: string, consumer: string): Promise<Prepared> {
  return withStore('provision', (psql) => preparePair(psql, provision, consumer));
}

/** Pairs some holder has no current copy of (a rejoined machine, a new holder); with HOLDERS, only those one of them is in. */
export function staleCredentials(
  holders?: string[],
): Promise<{ provision: string; consumer: string; secret: string }[]> {
  return withStore('provision', async (psql) =>
    (
      await psql`select provision, consumer, secret from provision.stale_credentials
                                                             where ${holders ?? null}::text[] is null or ${holders ?? null}::text[] && holders_without_copy order by secret`
    ).map((r) => ({ provision: r.provision as string, consumer: r.consumer as string, secret: r.secret as string })),
  );
}
