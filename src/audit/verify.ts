// `mesh audit verify`: recompute the hash chain of the history (C3). Whole,
// it answers its length and newest hash (keep the hash elsewhere: it anchors
// the chain against rows cut from its end or a rewrite of its whole tail);
// broken, the store refuses with MSH71 naming the first row that does not match.
import { withStore } from '../store/with_store.js';

export async function verifyHistory(): Promise<{ intact: true; rows: number; head: string }> {
  return withStore('audit', async (sql) => {
    const [r] = await sql<{ rows: bigint; head: string }[]>`select rows, head from audit.check_chain()`;
    return { intact: true, rows: Number(r!.rows), head: r!.head };
  });
}
