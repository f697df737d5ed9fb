// All-or-nothing (S5) includes the broker: a holder whose queue is gone cannot
// be told, so it is found before anything is made, stored or sent. A broker
// that does not answer at all is another matter: what is owed waits in the
// outbox (W1) until it is back, and the provider keeps accepting the old
// credential until every holder acknowledged the new one, so nothing is cut
// off by committing now. Then the check is not made, and the caller says so.
import { readBroker } from '../home/home.js';
import { management } from '../broker/admin.js';
import { Accounts } from '../broker/accounts.js';
import { BrokerAdminError } from '../broker/management.js';

/** Nodes among `nodes` that have no queue on the broker; undefined when the broker does not answer, so it cannot be asked. */
export async function missingQueues(nodes: string[]): Promise<string[] | undefined> {
  try {
    return await new Accounts(management(readBroker())).missingQueues(nodes);
  } catch (err) {
    if (err instanceof BrokerAdminError && err.status === undefined) return undefined;
    throw new Error(
      `${(err as Error).message.replace(/[.?]$/, '')}; nothing was changed: run it again once the broker answers.`,
      { cause: err },
    );
  }
}
