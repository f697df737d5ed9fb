// The one client of RabbitMQ's management API (HTTP on loopback): accounts,
// permissions, queues, vhosts, connections. No shell command runs from the
// control plane; every call has a deadline and a sentence naming the remedy.
export interface ManagementEndpoint {
  /** One API, or every node's of a cluster: any node answers for the whole cluster, so one that does not is passed over. */
  url: string | string[];
  user: string;
  password: string;
}

export class BrokerAdminError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface Permissions {
  configure: string;
  write: string;
  read: string;
}
export interface ConnectionInfo {
  node: string;
  user: string;
  peerHost: string;
  clientName: string;
}
export interface QueueInfo {
  name: string;
  consumers?: number;
  messages?: number;
}

const path = (...parts: string[]) => parts.map(encodeURIComponent).join('/');

/** How often a close of a user's connections is asked while the broker is closing them itself. */
const CLOSE_ATTEMPTS = 5;

/** A call the broker answered with an error: its status and the start of what it said. */
async function refused(method: string, p: string, r: Response): Promise<BrokerAdminError> {
  return new BrokerAdminError(
    `the broker refused ${method} ${p}: ${r.status} ${(await r.text()).slice(0, 200)}`,
    r.status,
  );
}

export class ManagementApi {
  private readonly urls: string[];
  /** The node that answered last: asked first next time. */
  private current = 0;

  constructor(
    readonly endpoint: ManagementEndpoint,
    private readonly timeoutMs = 15_000,
  ) {
    this.urls = typeof endpoint.url === 'string' ? [endpoint.url] : endpoint.url;
    if (this.urls.length === 0)
      throw new BrokerAdminError('no management API is named: broker.json\'s "management" is an empty list.');
  }

  /** The answer as it came; throws only when no node's API answers at all. */
  async raw(method: string, p: string, body?: unknown): Promise<Response> {
    const said: string[] = [];
    for (let k = 0; k < this.urls.length; k++) {
      const i = (this.current + k) % this.urls.length;
      const url = this.urls[i]!;
      try {
        const r = await fetch(`${url}/api${p}`, {
          method,
          headers: {
            authorization: 'Basic ' + Buffer.from(`${this.endpoint.user}:${this.endpoint.password}`).toString('base64'),
            'content-type': 'application/json',
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        this.current = i;
        return r;
      } catch (err) {
        said.push(`${url}: ${(err as Error).message}`);
      }
    }
    throw new BrokerAdminError(
      `the broker's management API did not answer (${said.join('; ')}): is RabbitMQ running with rabbitmq_management?`,
    );
  }

  /** A call that must succeed: JSON back, or undefined for 404 where `absentOk`. */
  async call<T = unknown>(method: string, p: string, body?: unknown, absentOk = false): Promise<T | undefined> {
    const r = await this.raw(method, p, body);
    if (absentOk && r.status === 404) return undefined;
    if (!r.ok) throw await refused(method, p, r);
    const text = await r.text();
    return text ? (JSON.parse(text) as T) : undefined;
  }

  overview(): Promise<unknown> {
    return this.call('GET', '/overview');
  }

  putVhost(vhost: string): Promise<unknown> {
    return this.call('PUT', `/vhosts/${path(vhost)}`, {});
  }
  async hasVhost(vhost: string): Promise<boolean> {
    return (await this.call('GET', `/vhosts/${path(vhost)}`, undefined, true)) !== undefined;
  }
  deleteVhost(vhost: string): Promise<unknown> {
    return this.call('DELETE', `/vhosts/${path(vhost)}`, undefined, true);
  }

  putUser(user: string, password: string, tags = ''): Promise<unknown> {
    return this.call('PUT', `/users/${path(user)}`, { password, tags });
  }
  deleteUser(user: string): Promise<unknown> {
    return this.call('DELETE', `/users/${path(user)}`, undefined, true);
  }
  async users(): Promise<{ name: string }[]> {
    return (await this.call<{ name: string }[]>('GET', '/users')) ?? [];
  }
  putPermissions(vhost: string, user: string, p: Permissions): Promise<unknown> {
    return this.call('PUT', `/permissions/${path(vhost, user)}`, p);
  }

  putQueue(vhost: string, queue: string, args: Record<string, unknown> = {}): Promise<unknown> {
    return this.call('PUT', `/queues/${path(vhost, queue)}`, { durable: true, auto_delete: false, arguments: args });
  }
  putPolicy(
    vhost: string,
    name: string,
    policy: { pattern: string; definition: Record<string, unknown>; 'apply-to': 'queues'; priority: number },
  ): Promise<unknown> {
    return this.call('PUT', `/policies/${path(vhost, name)}`, policy);
  }
  /** A per-user limit the broker enforces: max-connections or max-channels. */
  putUserLimit(user: string, name: 'max-connections' | 'max-channels', value: number): Promise<unknown> {
    return this.call('PUT', `/user-limits/${path(user)}/${name}`, { value });
  }
  /** Every queue of a vhost, its name and type. */
  async queues(vhost: string): Promise<{ name: string; type: string }[]> {
    return (await this.call<{ name: string; type: string }[]>('GET', `/queues/${path(vhost)}?columns=name,type`)) ?? [];
  }
  /** The queue, or undefined when there is none. */
  queue(vhost: string, queue: string): Promise<QueueInfo | undefined> {
    return this.call<QueueInfo>('GET', `/queues/${path(vhost, queue)}`, undefined, true);
  }
  deleteQueue(vhost: string, queue: string): Promise<unknown> {
    return this.call('DELETE', `/queues/${path(vhost, queue)}`, undefined, true);
  }

  /**
   * The connections of a vhost across the cluster, each with the broker node
   * it is on (`node`): where a failover can be seen moving.
   */
  async connections(vhost: string): Promise<ConnectionInfo[]> {
    const rows =
      (await this.call<Record<string, any>[]>(
        'GET',
        `/vhosts/${path(vhost)}/connections?columns=name,node,user,peer_host,client_properties.connection_name`,
      )) ?? [];
    return rows.map((r) => ({
      node: String(r.node),
      user: String(r.user),
      peerHost: String(r.peer_host),
      clientName: String(r.client_properties?.connection_name ?? ''),
    }));
  }

  /**
   * Close every connection of one user, in one call on the broker's side.
   * Not a listing of all connections and a delete of each: a listing taken
   * while connections are closing answers 500 (seen with 50 nodes retired at once).
   * The broker closes a deleted user's connections itself; one it still tracks
   * but has just closed makes this call answer 500 (noproc in
   * rabbit_mgmt_wm_connection_user_name): asked again, the closed one is gone.
   */
  async closeConnectionsOf(user: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const p = `/connections/username/${path(user)}`;
      const r = await this.raw('DELETE', p);
      if (r.ok || r.status === 404) return;
      if (r.status !== 500 || attempt === CLOSE_ATTEMPTS) throw await refused('DELETE', p, r);
      await r.body?.cancel();
      await new Promise((res) => setTimeout(res, 100 * attempt));
    }
  }
}
