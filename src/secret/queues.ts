// All-or-nothing (S5) includes the broker: a holder whose queue is gone cannot
// be told, so it is found before anything is made, stored or sent. The publish
// in declare is mandatory too, but by then the new value would be committed.
import { readBroker, management } from '../home/home.js';
import { queueOf } from '../wire/names.js';

/** Nodes among `nodes` that have no queue on the broker. */
export async function missingQueues(nodes: string[]): Promise<string[]> {
  const m = management(readBroker());
  const auth = 'Basic ' + Buffer.from(`${m.user}:${m.password}`).toString('base64');
  const missing: string[] = [];
  for (const node of nodes) {
    let r: Response;
    try {
      r = await fetch(`${m.url}/api/queues/${encodeURIComponent(m.vhost)}/${encodeURIComponent(queueOf(node))}`, {
        headers: { authorization: auth }, signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      throw new Error(`the broker's management API at ${m.url} did not answer (${(err as Error).message}): nothing was changed; start RabbitMQ and run it again.`, { cause: err });
    }
    if (r.status === 404) missing.push(node);
    else if (!r.ok) throw new Error(`the broker answered ${r.status} about ${queueOf(node)}: nothing was changed; run it again once the broker answers.`);
  }
  return missing;
}
