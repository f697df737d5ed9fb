// One pair's credential (S5), made and stored in two steps so that everything
// which can refuse does so before the new value is committed: resolve every
// holder in SQL (provision.resolve_holders refuses an unenrolled one), find
// every holder's queue on the broker, and only then seal and store. Storing
// checks the keys once more (secret.put_made), in the same transaction.
import type { Sql } from '../store/connect.js';
import { makeSealed, type Sealed } from '../secret/value.js';
import { missingQueues } from '../secret/queues.js';
import { storeError } from '../store/errors.js';

export interface PairHolder { node: string; sides: string[] }
export interface Prepared { provision: string; consumer: string; secret: string; holders: PairHolder[]; sealed: Sealed }
export interface Made { provision: string; consumer: string; secret: string; generation: number; holders: PairHolder[] }

export async function preparePair(psql: Sql, provision: string, consumer: string): Promise<Prepared> {
  let rows;
  try {
    rows = await psql`select node, sides, sealing_key, secret from provision.resolve_holders(provision_name => ${provision}::text, consumer_module => ${consumer}::text)`;
  } catch (err) { throw storeError(err); }
  const holders = rows.map((r) => ({ node: r.node as string, sides: r.sides as string[] }));
  const gone = await missingQueues(holders.map((h) => h.node));
  if (gone.length) {
    throw new Error(`cannot resolve ${gone.join(', ')}: no queue on the broker, so it cannot be told. Nothing was sent and the old credential keeps working; retire and enrol it again, or unassign its module.`);
  }
  const sealed = makeSealed(rows.map((r) => ({ node: r.node as string, sealingKey: r.sealing_key as string })));
  return { provision, consumer, secret: rows[0]!.secret as string, holders, sealed };
}

export async function commitPair(ssql: Sql, p: Prepared): Promise<Made> {
  try {
    const [row] = await ssql`select secret.put_made(secret_name => ${p.secret}::text, holders => ${p.sealed.holders}::text[],
                               sealed_to => ${p.sealed.keys}::text[], blobs => ${p.sealed.blobs}::text[]) as generation`;
    return { provision: p.provision, consumer: p.consumer, secret: p.secret, generation: Number(row!.generation), holders: p.holders };
  } catch (err) { throw storeError(err); }
}
