// `mesh audit verify` and `mesh audit head` (C3). Verify refuses with the first
// thing wrong: an audit trigger not in force (MSH75), a row that does not match
// the chain recomputed from row 1 (MSH71), or, given a head kept outside the
// store, a chain that no longer reaches it (MSH76). Whole, it answers the
// length and newest row's seq and hash: `mesh audit head` is that answer,
// for the operator to keep where the daemons cannot write.
import { withStore } from '../store/with_store.js';
import { readHead, type Head } from './head.js';

export interface Verified {
  intact: true;
  rows: number;
  seq: number;
  head: string;
  /** The kept head the chain was checked against, when one was given. */
  kept?: { seq: number; hash: string };
}

export async function verifyHistory(o: { head?: string } = {}): Promise<Verified> {
  const kept = o.head === undefined ? undefined : readHead(o.head);
  return withStore('audit', async (sql) => {
    const [r] = await sql<{ rows: bigint; head_seq: bigint; head: string }[]>`
      select rows, head_seq, head from audit.check_history(kept_seq => ${kept?.seq ?? null}::bigint, kept_hash => ${kept?.hash ?? null}::text)`;
    return {
      intact: true,
      rows: Number(r!.rows),
      seq: Number(r!.head_seq),
      head: r!.head,
      ...(kept ? { kept: { seq: kept.seq, hash: kept.hash } } : {}),
    };
  });
}

/** The head of a whole history, verified first: a head of a broken chain is not worth keeping. */
export async function currentHead(): Promise<Head> {
  const v = await verifyHistory();
  return { seq: v.seq, hash: v.head, taken_at: new Date().toISOString() };
}
