// Three RabbitMQ nodes on loopback joined as one cluster, as a grown mesh runs
// the broker: each node its own name, ports, data dir and TLS listener with a
// certificate of its own (brokerNode, the one node the harness knows), one
// Erlang cookie, one epmd (each node finds the others through it). The first
// node starts alone; each other node starts and then joins it with RabbitMQ's
// own steps (stop_app, join_cluster, start_app), as bundle/broker_cluster.ts
// joins a grown mesh's node: join_cluster fails loudly where peer discovery
// would quietly boot a standalone node when its peer is slow to answer.
// kill(i) is a crash (SIGKILL of the node's process group), resume(i) starts
// it again on its kept data.
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { BIN, brokerNode, freePorts, newAdmin, type Rabbit } from './rabbitmq.js';
import { freePort } from './ports.js';
import { ManagementApi } from '../../src/broker/management.js';
import { run } from '../../src/sys/proc.js';

export interface QuorumStatus {
  type: string;
  members: string[];
  online: string[];
  leader?: string;
}

export interface RabbitCluster {
  nodes: Rabbit[];
  admin: { user: string; password: string };
  /** A management client trying every node in turn (any node answers for the cluster). */
  api: ManagementApi;
  kill(i: number): Promise<void>;
  resume(i: number): Promise<void>;
  /** A queue's type, and for a quorum queue its members and those online (GET /api/queues/VHOST/NAME). */
  queueStatus(vhost: string, queue: string): Promise<QuorumStatus>;
  /** The nodes the cluster says are running. */
  running(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startCluster(dir: string, size = 3): Promise<RabbitCluster> {
  const id = randomBytes(3).toString('hex');
  const admin = newAdmin();
  const cookie = randomBytes(20).toString('hex').toUpperCase();
  const epmd = await freePort();
  const names = Array.from({ length: size }, (_, i) => `mesh-${id}-${i + 1}@localhost`);
  const nodes: Rabbit[] = [];
  for (let i = 0; i < size; i++) {
    const ports = { ...(await freePorts(['amqp', 'amqps', 'mgmt', 'dist'] as const)), epmd };
    nodes.push(
      await brokerNode({
        dir: join(dir, `node${i + 1}`),
        nodename: names[i]!,
        admin,
        ports,
        cookie,
      }),
    );
  }
  const stopAll = () => Promise.allSettled(nodes.map((n) => n.halt()));
  try {
    await nodes[0]!.resume();
    // One at a time, so two never reset the same membership at once.
    for (const n of nodes.slice(1)) {
      await n.resume();
      const ctl = (args: string[]) =>
        run(join(BIN, 'rabbitmqctl'), ['-q', '-n', n.nodename, ...args], { env: n.env, timeoutMs: 120_000 });
      await ctl(['stop_app']);
      await ctl(['join_cluster', names[0]!]);
      await ctl(['start_app']);
      await n.ready();
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  const api = new ManagementApi(
    { url: nodes.map((n) => `http://127.0.0.1:${n.mgmtPort}`), user: admin.user, password: admin.password },
    5_000,
  );
  const cluster: RabbitCluster = {
    nodes,
    admin,
    api,
    kill: (i) => nodes[i]!.kill(),
    resume: (i) => nodes[i]!.resume(),
    async queueStatus(vhost, queue) {
      const q = await api.call<{ type: string; members?: string[]; online?: string[]; leader?: string }>(
        'GET',
        `/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(queue)}`,
      );
      return {
        type: q!.type,
        members: [...(q!.members ?? [])].sort(),
        online: [...(q!.online ?? [])].sort(),
        leader: q!.leader,
      };
    },
    async running() {
      const ns = (await api.call<{ name: string; running: boolean }[]>('GET', '/nodes')) ?? [];
      return ns
        .filter((n) => n.running)
        .map((n) => n.name)
        .sort();
    },
    async stop() {
      await stopAll();
      try {
        await run('epmd', ['-kill'], { env: nodes[0]!.env });
      } catch {
        /* already gone */
      }
    },
  };
  // join_cluster returns once the membership is written; the API may take a moment to see every node up.
  let joined = await cluster.running();
  for (let i = 0; joined.length !== size && i < 30; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    joined = await cluster.running();
  }
  if (joined.length !== size) {
    await cluster.stop();
    throw new Error(
      `the cluster formed with ${joined.length} of ${size} nodes running (${joined.join(', ')}); see ${dir}/node*/log`,
    );
  }
  return cluster;
}
