// The control plane's broker hop when the broker is a cluster (issue 19):
// broker.json names several nodes, and a connection tries them in turn, from
// the one after the node it lost, so a dead node is passed over at once. The
// host link takes its turns the same way over the nodes it dials (host/link).
import { connectBroker, type Connection, type Endpoint } from './connect.js';

export class Turns {
  private at = 0;
  constructor(private readonly endpoints: Endpoint[]) {
    if (endpoints.length === 0) throw new Error('no broker to connect to: broker.json\'s "amqp" is an empty list.');
  }

  /** The node to try first next time: the one after the last connected (or failed). */
  moveOn(): void { this.at = (this.at + 1) % this.endpoints.length; }

  /** Each node once, from the current one; the first that answers. Rejects saying what each said. */
  async connect(name: string): Promise<{ conn: Connection; endpoint: Endpoint }> {
    const said: string[] = [];
    for (let k = 0; k < this.endpoints.length; k++) {
      const endpoint = this.endpoints[this.at]!;
      try {
        return { conn: await connectBroker(endpoint, { name }), endpoint };
      } catch (err) {
        said.push(`${endpoint.host}:${endpoint.port}: ${(err as Error).message}`);
        this.moveOn();
      }
    }
    throw new Error(said.join('; '));
  }
}
