// All-or-nothing (S5) includes the broker: a holder whose queue is gone cannot
// be told, so it is found before anything is made, stored or sent. The publish
// in declare is mandatory too, but by then the new value would be committed.
import { readBroker } from '../home/home.js';
import { management } from '../broker/admin.js';
import { Accounts } from '../broker/accounts.js';

/** Nodes among `nodes` that have no queue on the broker. */
export async function missingQueues(nodes: string[]): Promise<string[]> {
  try {
    return await new Accounts(management(readBroker())).missingQueues(nodes);
  } catch (err) {
    throw new Error(`${(err as Error).message.replace(/[.?]$/, '')}; nothing was changed: run it again once the broker answers.`, { cause: err });
  }
}
