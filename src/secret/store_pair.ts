// The second step of a pair's credential (S5): store what provision prepared
// and sealed. secret.put_made checks every holder's key again in the same
// transaction, so a key that changed since it was read refuses (MSH43).
// The shapes handed over are this side's: provision calls down into secret.
import { withStore } from '../store/with_store.js';
import type { Sealed } from './value.js';

export interface PairHolder {
  node: string;
  sides: string[];
}
/** queuesChecked false: the broker did not answer, so no holder's queue could be looked for; the outbox holds what is owed. */
export interface Prepared {
  provision: string;
  consumer: string;
  secret: string;
  holders: PairHolder[];
  sealed: Sealed;
  queuesChecked: boolean;
}
export interface Made {
  provision: string;
  consumer: string;
  secret: string;
  generation: number;
  holders: PairHolder[];
  queuesChecked: boolean;
}

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
