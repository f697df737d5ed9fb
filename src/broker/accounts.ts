// Per-node broker accounts, through the management API client. Permissions
// are anchored and the node name cannot widen them (src/wire/names.ts).
import { accountOf, queueOf, nodeName } from '../wire/names.js';
import { CONTROL_QUEUE, EXCHANGE, moving } from './topology.js';
import { ManagementApi } from './management.js';
import { LIMITS } from '../wire/envelope.js';

/** Messages a node's queue keeps while nobody reads it; the oldest go first (W3). */
export const NODE_QUEUE_KEEPS = 16;

/**
 * P2: what one node account may open on the broker (RabbitMQ's per-user
 * limits): a host keeps one connection, a second while one closes.
 */
export const NODE_ACCOUNT_LIMITS = { 'max-connections': 4, 'max-channels': 32 } as const;

/**
 * P2: the most mesh.control holds before the broker refuses new publishes to
 * it (reject-publish: a publisher with confirms is told, the broker never
 * blocks). Far below the broker's memory alarm, which blocks every publisher
 * of the broker, serve's own declarations among them.
 */
export const CONTROL_QUEUE_BOUND = { messages: 200_000, bytes: 256 << 20 } as const;

export interface Management {
  url: string | string[];
  user: string;
  password: string;
  vhost: string;
  accountPrefix?: string;
  /** Node queues as quorum queues: where the broker is a cluster, so a node's queue outlives the broker node it lives on. */
  quorumNodeQueues?: boolean;
}

const anchored = (name: string) => `^${name.replace(/\./g, '\\.')}$`;

export class Accounts {
  readonly api: ManagementApi;
  constructor(private readonly m: Management) {
    this.api = new ManagementApi(m);
  }

  /** The account name a node logs in with. */
  account(node: string): string {
    return accountOf(node, this.m.accountPrefix);
  }

  /** Account, scoped permissions and the node's durable queue. Idempotent. */
  async createNode(node: string, password: string): Promise<void> {
    nodeName(node);
    const user = this.account(node);
    await this.api.putUser(user, password);
    await this.api.putPermissions(this.m.vhost, user, {
      configure: '^$',
      write: `^${EXCHANGE}$`,
      read: anchored(queueOf(node)),
    });
    for (const [name, value] of Object.entries(NODE_ACCOUNT_LIMITS))
      await this.api.putUserLimit(user, name as keyof typeof NODE_ACCOUNT_LIMITS, value);
    // An existing queue stays as it is (its type cannot change, and a node enrolled again keeps it).
    if (!(await this.api.queue(this.m.vhost, queueOf(node))))
      await this.api.putQueue(this.m.vhost, queueOf(node), this.m.quorumNodeQueues ? { 'x-queue-type': 'quorum' } : {});
  }

  /**
   * W3: a node's queue carries, SQL keeps. Declarations supersede each other
   * and a host asks for its newest on every connect (recover), so a queue of a
   * node away for a week keeps only its newest few: the oldest are dropped at
   * NODE_QUEUE_KEEPS messages or twice the largest declaration in bytes. A
   * policy, not queue arguments: it applies to queues made before it, and
   * changes without remaking them.
   */
  async carryPolicy(): Promise<void> {
    await this.api.putPolicy(this.m.vhost, 'mesh-node-queues', {
      pattern: `^${queueOf('').replace(/\./g, '\\.')}`,
      'apply-to': 'queues',
      priority: 0,
      definition: { 'max-length': NODE_QUEUE_KEEPS, 'max-length-bytes': 2 * LIMITS.declaration, overflow: 'drop-head' },
    });
    // P2: the control queue (and the one that holds its traffic while it moves) bounded, refusing what is over.
    await this.api.putPolicy(this.m.vhost, 'mesh-control-bound', {
      pattern: `^(${anchored(CONTROL_QUEUE).slice(1, -1)}|${anchored(moving(CONTROL_QUEUE)).slice(1, -1)})$`,
      'apply-to': 'queues',
      priority: 0,
      definition: {
        'max-length': CONTROL_QUEUE_BOUND.messages,
        'max-length-bytes': CONTROL_QUEUE_BOUND.bytes,
        overflow: 'reject-publish',
      },
    });
  }

  /**
   * A single broker become a cluster: each node's classic queue is made again
   * as quorum, so it outlives the broker node it was on (W3). What it held is
   * dropped, as the cap drops it (W3 again): its host, whose consumer the
   * broker cancels, connects again and asks for its newest (recover). A
   * publish meanwhile is unroutable and stays owed in the outbox (W1).
   */
  async quorumNodeQueues(): Promise<string[]> {
    if (!this.m.quorumNodeQueues) return [];
    const moved: string[] = [];
    for (const q of await this.api.queues(this.m.vhost)) {
      if (q.type !== 'classic' || !q.name.startsWith(queueOf(''))) continue;
      await this.api.deleteQueue(this.m.vhost, q.name);
      await this.api.putQueue(this.m.vhost, q.name, { 'x-queue-type': 'quorum' });
      moved.push(q.name);
    }
    return moved;
  }

  async setPassword(node: string, password: string): Promise<void> {
    await this.api.putUser(this.account(nodeName(node)), password);
  }

  /** Removes the account (closing its connections) and its queue. */
  async retire(node: string): Promise<void> {
    const user = this.account(nodeName(node));
    await this.api.deleteUser(user);
    await this.api.closeConnectionsOf(user);
    await this.api.deleteQueue(this.m.vhost, queueOf(node));
  }

  /** The account name of a build machine. */
  builderAccount(name: string): string {
    return accountOf(nodeName(name, 'builder name'), this.m.accountPrefix, 'builder');
  }

  /** An account for a build machine: reads the build queue, writes the exchange. */
  async createBuilder(name: string, password: string, buildQueue: string): Promise<void> {
    const user = this.builderAccount(name);
    await this.api.putUser(user, password);
    await this.api.putPermissions(this.m.vhost, user, {
      configure: '^$',
      write: `^${EXCHANGE}$`,
      read: anchored(buildQueue),
    });
  }

  /** A builder's password, replaced by the one it chose at enrolment: the printed line's stops working. */
  async setBuilderPassword(name: string, password: string): Promise<void> {
    await this.api.putUser(this.builderAccount(name), password);
  }

  /** Nodes among `nodes` that have no queue on the broker. */
  async missingQueues(nodes: string[]): Promise<string[]> {
    const missing: string[] = [];
    for (const node of nodes) if (!(await this.api.queue(this.m.vhost, queueOf(node)))) missing.push(node);
    return missing;
  }
}
