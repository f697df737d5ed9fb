// Per-node broker accounts through RabbitMQ's management API on loopback: no
// shell command runs from the control plane. Permissions are anchored and the
// node name cannot widen them (src/wire/names.ts).
import { accountOf, queueOf, nodeName } from '../wire/names.js';
import { EXCHANGE } from './topology.js';

export interface Management { url: string; user: string; password: string; vhost: string; accountPrefix?: string }

export class BrokerAdminError extends Error {}

export class Accounts {
  constructor(private readonly m: Management) {}

  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    let r: Response;
    try {
      r = await fetch(`${this.m.url}/api${path}`, {
        method,
        headers: {
          authorization: 'Basic ' + Buffer.from(`${this.m.user}:${this.m.password}`).toString('base64'),
          'content-type': 'application/json',
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
    } catch (err) {
      throw new BrokerAdminError(`the broker's management API at ${this.m.url} did not answer (${(err as Error).message}): is RabbitMQ running with rabbitmq_management?`, { cause: err });
    }
    if (method === 'DELETE' && r.status === 404) return undefined;
    if (!r.ok) throw new BrokerAdminError(`the broker refused ${method} ${path}: ${r.status} ${(await r.text()).slice(0, 200)}`);
    const text = await r.text();
    return text ? JSON.parse(text) : undefined;
  }

  /** The account name a node logs in with. */
  account(node: string): string { return accountOf(node, this.m.accountPrefix); }

  private v(): string { return encodeURIComponent(this.m.vhost); }

  /** Account, scoped permissions and the node's durable queue. Idempotent. */
  async createNode(node: string, password: string): Promise<void> {
    nodeName(node);
    const user = encodeURIComponent(accountOf(node, this.m.accountPrefix));
    await this.call('PUT', `/users/${user}`, { password, tags: '' });
    await this.call('PUT', `/permissions/${this.v()}/${user}`, {
      configure: '^$',
      write: `^${EXCHANGE}$`,
      read: `^${queueOf(node).replace(/\./g, '\\.')}$`,
    });
    await this.call('PUT', `/queues/${this.v()}/${encodeURIComponent(queueOf(node))}`, { durable: true, auto_delete: false, arguments: {} });
  }

  async setPassword(node: string, password: string): Promise<void> {
    await this.call('PUT', `/users/${encodeURIComponent(accountOf(nodeName(node), this.m.accountPrefix))}`, { password, tags: '' });
  }

  /** Removes the account (closing its connections) and its queue. */
  async retire(node: string): Promise<void> {
    const user = accountOf(nodeName(node), this.m.accountPrefix);
    const conns = (await this.call('GET', `/connections?columns=name,user`)) as { name: string; user: string }[] | undefined;
    await this.call('DELETE', `/users/${encodeURIComponent(user)}`);
    for (const c of conns ?? []) if (c.user === user) await this.call('DELETE', `/connections/${encodeURIComponent(c.name)}`);
    await this.call('DELETE', `/queues/${this.v()}/${encodeURIComponent(queueOf(node))}`);
  }

  /** An account for a build machine: reads the build queue, writes the exchange. */
  async createBuilder(name: string, password: string, buildQueue: string): Promise<void> {
    const user = encodeURIComponent(`${this.m.accountPrefix ?? ''}builder.${nodeName(name, 'builder name')}`);
    await this.call('PUT', `/users/${user}`, { password, tags: '' });
    await this.call('PUT', `/permissions/${this.v()}/${user}`, { configure: '^$', write: `^${EXCHANGE}$`, read: `^${buildQueue.replace(/\./g, '\\.')}$` });
  }
}
