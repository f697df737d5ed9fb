// The broker's half of a backup, kept by inventory (the node accounts are its):
// this mesh's definitions, as RabbitMQ's own management API exports and imports
// them (GET and POST /api/definitions).
// Only what is this mesh's: its vhost with its queues, exchanges, bindings and
// policies, and the node and builder accounts (with their password hashes, so
// every node logs in again with the password it chose at enrolment, without a
// new token) and their permissions. Never the admin account broker.json names:
// the broker a backup is restored into has an admin of its own, whose password
// its own broker.json holds, and importing the old one would lock serve out.
import type { BrokerConfig } from '../home/home.js';
import { ManagementApi } from '../broker/management.js';

type Row = Record<string, unknown>;

export interface MeshDefinitions {
  rabbit_version?: string;
  users: Row[];
  vhosts: Row[];
  permissions: Row[];
  topic_permissions: Row[];
  policies: Row[];
  queues: Row[];
  exchanges: Row[];
  bindings: Row[];
}

const api = (b: BrokerConfig) => new ManagementApi({ url: b.management, user: b.user, password: b.password }, 60_000);

/** Is USER one of this mesh's accounts (its prefix), and not the admin? */
const ours = (b: BrokerConfig, user: unknown) =>
  typeof user === 'string' && user !== b.user && user.startsWith(b.accountPrefix ?? '');

/** This mesh's definitions, out of everything the broker holds. */
export async function exportDefinitions(b: BrokerConfig): Promise<MeshDefinitions> {
  const all = (await api(b).call<Record<string, Row[] | string>>('GET', '/definitions')) ?? {};
  const rows = (k: string) => (Array.isArray(all[k]) ? (all[k] as Row[]) : []);
  const inVhost = (r: Row) => r.vhost === b.vhost;
  return {
    rabbit_version: typeof all.rabbit_version === 'string' ? all.rabbit_version : undefined,
    users: rows('users').filter((u) => ours(b, u.name)),
    vhosts: rows('vhosts').filter((v) => v.name === b.vhost),
    permissions: rows('permissions').filter((p) => inVhost(p) && ours(b, p.user)),
    topic_permissions: rows('topic_permissions').filter((p) => inVhost(p) && ours(b, p.user)),
    policies: rows('policies').filter(inVhost),
    queues: rows('queues').filter(inVhost),
    exchanges: rows('exchanges').filter(inVhost),
    bindings: rows('bindings').filter(inVhost),
  };
}

/**
 * Put D into the broker B names, as one import: the vhost named in D is B's
 * own (a new install may name it alike, or not), and the admin gets every
 * permission on it, as the installer gives it.
 */
export async function importDefinitions(
  b: BrokerConfig,
  d: MeshDefinitions,
): Promise<{ users: number; queues: number }> {
  const to = (r: Row) => ({ ...r, vhost: b.vhost });
  const body = {
    users: d.users.filter((u) => ours(b, u.name)),
    vhosts: [{ name: b.vhost }],
    permissions: [
      ...d.permissions.filter((p) => ours(b, p.user)).map(to),
      { user: b.user, vhost: b.vhost, configure: '.*', write: '.*', read: '.*' },
    ],
    topic_permissions: d.topic_permissions.filter((p) => ours(b, p.user)).map(to),
    policies: d.policies.map(to),
    queues: d.queues.map(to),
    exchanges: d.exchanges.map(to),
    bindings: d.bindings.map(to),
  };
  await api(b).call('POST', '/definitions', body);
  return { users: body.users.length, queues: body.queues.length };
}
