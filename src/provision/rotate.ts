// `mesh secret rotate PROVISION CONSUMER` (S5): one pair, one generation. Both
// ends are owed by this command, not a later one, and it is all-or-nothing:
// any holder that cannot be resolved stops it before the new value is
// committed, so nothing is sent and the old credential keeps working. It
// commits without the broker: what is owed waits in the outbox (W1), and the
// old credential is accepted until every holder acknowledged the new one.
import { declare, type Declared } from '../assignment/declare.js';
import { prepare } from './credential.js';
import { storePair, type Made } from '../secret/store_pair.js';
import { windowOf } from '../secret/window.js';

export interface Rotated extends Made {
  sent: Declared[];
  window: string;
}

export async function rotate(provision: string, consumer: string): Promise<Rotated> {
  const made: Made = await storePair(await prepare(provision, consumer));
  const sent = await declare({ nodes: made.holders.map((h) => h.node) });
  return { ...made, sent, window: windowOf(made, sent) };
}
