// The second step of a pair's credential (S5): store what provision prepared
// and sealed. secret.put_made checks every holder's key again in the same
// transaction, so a key that changed since it was read refuses (MSH43).
import { withStore } from '../store/with_store.js';
import type { Prepared, Made } from '../provision/credential.js';

/** Forget a secret whose pair was revoked: its sealed copies go with it. */
export function forgetSecret(secret: string): Promise<void> {
  return withStore('secret', async (sql) => {
    await sql`select secret.forget(${secret})`;
  });
}

export function storePair(p: Prepared): Promise<Made> {
  return withStore('secret', async (ssql) => {
    const [row] =
      await ssql`select secret.put_made(secret_name => ${p.secret}::text, holders => ${p.sealed.holders}::text[],
                               sealed_to => ${p.sealed.keys}::text[], blobs => ${p.sealed.blobs}::text[]) as generation`;
    return {
      provision: p.provision,
      consumer: p.consumer,
      secret: p.secret,
      generation: Number(row!.generation),
      holders: p.holders,
      queuesChecked: p.queuesChecked,
    };
  });
}
