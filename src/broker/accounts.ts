// Per-node broker accounts, through the management API client. Permissions
// are anchored and the node name cannot widen them (src/wire/names.ts).
import { accountOf, queueOf, nodeName } from '../wire/names.js';
import { EXCHANGE } from './topology.js';
import { ManagementApi } from './management.js';

export interface Management { url: string; user: string; password: string; vhost: string; accountPrefix?: string }

const anchored = (name: string) => `^${name.replace(/\./g, '\\.')}$`;

export class Accounts {
  readonly api: ManagementApi;
  constructor(private readonly m: Management) { this.api = new ManagementApi(m); }

  /** The account name a node logs in with. */
  account(node: string): string { return accountOf(node, this.m.accountPrefix); }

  /** Account, scoped permissions and the node's durable queue. Idempotent. */
  async createNode(node: string, password: string): Promise<void> {
    nodeName(node);
    const user = this.account(node);
    await this.api.putUser(user, password);
    await this.api.putPermissions(this.m.vhost, user, { configure: '^$', write: `^${EXCHANGE}$`, read: anchored(queueOf(node)) });
    await this.api.putQueue(this.m.vhost, queueOf(node));
  }

  async setPassword(node: string, password: string): Promise<void> {
    await this.api.putUser(this.account(nodeName(node)), password);
  }

  /** Removes the account (closing its connections) and its queue. */
  async retire(node: string): Promise<void> {
    const user = this.account(nodeName(node));
    const conns = await this.api.connections();
    await this.api.deleteUser(user);
    for (const c of conns) if (c.user === user) await this.api.deleteConnection(c.name);
    await this.api.deleteQueue(this.m.vhost, queueOf(node));
  }

  /** The account name of a build machine. */
  builderAccount(name: string): string { return `${this.m.accountPrefix ?? ''}builder.${nodeName(name, 'builder name')}`; }

  /** An account for a build machine: reads the build queue, writes the exchange. */
  async createBuilder(name: string, password: string, buildQueue: string): Promise<void> {
    const user = this.builderAccount(name);
    await this.api.putUser(user, password);
    await this.api.putPermissions(this.m.vhost, user, { configure: '^$', write: `^${EXCHANGE}$`, read: anchored(buildQueue) });
  }

  /** Nodes among `nodes` that have no queue on the broker. */
  async missingQueues(nodes: string[]): Promise<string[]> {
    const missing: string[] = [];
    for (const node of nodes) if (!(await this.api.queue(this.m.vhost, queueOf(node)))) missing.push(node);
    return missing;
  }
}
