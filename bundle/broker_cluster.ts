// Growing the broker into a cluster of RabbitMQ's own:
// what the first node hands a new broker node, and how that node joins.
//
// Two steps, one on each machine, as for the store's standby:
//   the first node (install.sh ... --add-broker-node NAME --broker-public HOST):
//     its broker becomes a node of a cluster (mesh@OVERLAY, distribution on
//     its overlay address; its data renamed, nothing lost), the new node's
//     certificate is made and its fingerprint recorded (inventory.put_broker,
//     so every host pins it through its declared `brokers`, and the firewall
//     admits epmd and the distribution between broker nodes only, X2), and
//     everything the new node needs is written to one 0600 file;
//   the new node (install.sh --broker-node --join FIRST --hand-over FILE):
//     takes the file (and removes it), runs a broker of its own with that
//     certificate and the cluster's Erlang cookie, and joins.
//
// The file carries the Erlang cookie, the admin password and the new node's
// TLS key: secrets, so 0600, written atomically, read only from a file (never
// argv, never the environment) and copied by the operator over ssh (scp). The
// key is made on the first node because the cookie already travels that way
// and is worth more than the key (it runs code on every broker node).
import { existsSync, readFileSync, statSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { writeAtomic } from '../src/sys/atomic.js';
import { run, runAny } from '../src/sys/proc.js';
import { brokerEnv, brokerNode, clusterNodeName, erlAddress } from './rabbitmq.js';
import { paths, type Options, type Ports } from './layout.js';
import { refuse } from '../src/sys/errors.js';

const BIN = '/usr/lib/rabbitmq/bin';

/** What the first node hands a new broker node: one JSON file, 0600. */
export interface HandOver {
  first: { name: string; erlNode: string; address: string };
  node: { name: string; address: string; public: string };
  ports: Pick<Ports, 'amqps' | 'amqp' | 'mgmt' | 'epmd' | 'dist'>;
  cookie: string;
  adminPassword: string;
  cert: string;
  key: string;
}

export async function writeHandOver(path: string, h: HandOver): Promise<void> {
  await writeAtomic(path, JSON.stringify(h, null, 2) + '\n', 0o600);
}

/** The hand-over, refused when others may read it (it holds the cookie) or when it is not for this join. */
export function readHandOver(path: string, want: { first: string; node: string }): HandOver {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st)
    throw refuse(
      'MSHD0',
      `no hand-over file at ${path}`,
      `run install.sh --add-broker-node ${want.node} on ${want.first} and copy the file it names here (scp)`,
    );
  if (st.mode & 0o077) {
    throw refuse(
      'MSHD1',
      `${path} is readable by others (mode ${(st.mode & 0o777).toString(8)})`,
      "it holds the cluster's Erlang cookie. chmod 600 it, and run the first node's step again if others may have read it",
    );
  }
  let h: HandOver;
  try {
    h = JSON.parse(readFileSync(path, 'utf8')) as HandOver;
  } catch (err) {
    throw refuse('MSHD2', `${path} is not a hand-over file (not JSON)`, `copy it again from ${want.first}`, err);
  }
  if (!h.first?.erlNode || !h.node?.address || !h.cookie || !h.key)
    throw refuse('MSHD2', `${path} is not a complete hand-over file`, `copy it again from ${want.first}`);
  if (h.first.name !== want.first)
    throw refuse(
      'MSHD3',
      `${path} was written by ${h.first.name}, not ${want.first}`,
      `give --join ${h.first.name}, or the file ${want.first} wrote`,
    );
  if (h.node.name !== want.node)
    throw refuse(
      'MSHD4',
      `${path} is for ${h.node.name}, and this machine is enrolled as ${want.node}`,
      `on the first node run install.sh --add-broker-node ${want.node}`,
    );
  erlAddress(h.node.address);
  return h;
}

/** The environment rabbitmqctl and rabbitmq-queues need to reach this machine's broker (paths, ports, node name: no secret). */
export function ctlEnv(o: Options): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
    ...brokerEnv(paths(o).rabbit, brokerNode(o), o.ports, o.brokerAddress),
  };
}

/** The cluster's Erlang cookie on this machine (made by Erlang at the broker's first start). */
export function readCookie(o: Options): string {
  const p = paths(o).rabbitCookie;
  if (!existsSync(p))
    throw new Error(`${p} is missing: the broker has not started here yet (run the first node's install first).`);
  return readFileSync(p, 'utf8').trim();
}

/** This machine's broker is a node of a cluster from now on: its overlay address, kept in STATE/rabbitmq/cluster.json. */
export async function markClustered(o: Options, address: string, name: string): Promise<void> {
  clusterNodeName(address, name);
  await writeAtomic(paths(o).rabbitCluster, JSON.stringify({ address, name }) + '\n', 0o644);
}

/** The overlay address and node name kept by markClustered, if any. */
export function clustered(state: string): { address: string; name: string } | undefined {
  const p = paths({ state, home: '' } as Options).rabbitCluster;
  if (!existsSync(p)) return undefined;
  return JSON.parse(readFileSync(p, 'utf8')) as { address: string; name: string };
}

interface Status {
  disk_nodes?: string[];
  running_nodes?: string[];
}

/**
 * The broker's app up (the management API answers a little before it is):
 * await_startup exits at once while the node is not yet there, so it is asked again.
 */
export async function awaitApp(o: Options, seconds = 180): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const r = await runAny(`${BIN}/rabbitmqctl`, ['-q', 'await_startup', '--timeout', '30'], {
      env: ctlEnv(o),
      timeoutMs: 40_000,
    });
    if (r.code === 0) return;
    if (Date.now() > deadline)
      throw new Error(
        `the broker ${brokerNode(o)} did not finish starting within ${seconds}s: ${r.stderr.trim().split('\n')[0]}; see ${paths(o).rabbit}/log.`,
      );
    await new Promise((res) => setTimeout(res, 1000));
  }
}

export async function clusterStatus(o: Options): Promise<Status> {
  await awaitApp(o);
  const out = await run(`${BIN}/rabbitmqctl`, ['-q', 'cluster_status', '--formatter', 'json'], {
    env: ctlEnv(o),
    timeoutMs: 60_000,
  });
  return JSON.parse(out) as Status;
}

/** Until HOST:PORT takes a TCP connection (the first node's epmd, once its firewall admits this node). */
export async function waitReachable(
  host: string,
  port: number,
  seconds: number,
  said: (l: string) => void,
): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  let told = 0;
  for (;;) {
    const ok = await new Promise<boolean>((res) => {
      const s = tcpConnect({ host, port, timeout: 3000 });
      s.once('connect', () => {
        s.destroy();
        res(true);
      });
      s.once('timeout', () => {
        s.destroy();
        res(false);
      });
      s.once('error', () => res(false));
    });
    if (ok) return;
    if (Date.now() > deadline)
      throw new Error(
        `${host}:${port} did not answer within ${seconds}s: the first node's firewall must admit this node (mesh firewall show FIRST lists "broker cluster" openings once mesh broker add ... --node NAME is recorded and declared).`,
      );
    if (Date.now() - told > 15_000) {
      said(`waiting for ${host}:${port} (epmd of the first node, over the overlay)`);
      told = Date.now();
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Join the first node's cluster unless already in it: stop the app, join,
 * start it again (RabbitMQ's own steps), then add this node to every quorum
 * queue of the mesh's vhost (a quorum queue does not grow by itself). Returns what changed.
 */
export async function joinCluster(o: Options, firstNode: string): Promise<string[]> {
  const env = ctlEnv(o);
  const ctl = (args: string[]) => run(`${BIN}/rabbitmqctl`, ['-q', ...args], { env, timeoutMs: 120_000 });
  const did: string[] = [];
  const st = await clusterStatus(o);
  if (!(st.disk_nodes ?? []).includes(firstNode)) {
    await ctl(['stop_app']);
    await ctl(['join_cluster', firstNode]);
    await ctl(['start_app']);
    did.push(`joined ${firstNode}'s cluster`);
  }
  const grown = await runAny(
    `${BIN}/rabbitmq-queues`,
    ['-q', 'grow', brokerNode(o), 'all', '--vhost-pattern', '^mesh$', '--queue-pattern', '.*'],
    { env, timeoutMs: 120_000 },
  );
  if (grown.code !== 0)
    throw new Error(`rabbitmq-queues grow ${brokerNode(o)} all: ${grown.stderr.trim() || grown.stdout.trim()}`);
  if (/\S/.test(grown.stdout)) did.push('a member of every quorum queue');
  return did;
}

/** Remove the used hand-over file: a secret left lying about is a secret kept nowhere on purpose. */
export function removeHandOver(path: string): void {
  rmSync(path, { force: true });
}

// RabbitMQ's rename (rabbitmq-start.sh) carries accounts, permissions,
// policies, exchanges and classic queues with their messages, but not quorum
// queues (a Ra cluster is named by its nodes): their records are left broken
// (not found, and refused when declared again). So before the first node's
// broker is renamed, the bundle (1) holds every publisher (a memory watermark
// of 0 raises RabbitMQ's own alarm: publishes are blocked, unconfirmed, and
// their senders publish again later, R1; serve keeps consuming), (2) waits
// until every quorum queue is empty with nothing unacknowledged, (3) keeps
// their definitions and bindings in a file (0600) and deletes them, and after
// the start (4) declares them again from that file and removes it; a run cut
// off between (3) and (4) declares them at its next start. A queue that does
// not drain (a build request waiting for a builder) lifts the hold and
// refuses, naming it.

export interface QuorumSnapshot {
  queues: unknown[];
  bindings: unknown[];
}

interface Defs {
  queues?: { name: string; arguments?: Record<string, unknown> }[];
  bindings?: { destination: string; destination_type: string }[];
}
interface QueueRow {
  name: string;
  type?: string;
  messages?: number;
  messages_unacknowledged?: number;
}

export async function holdAndDrainQuorum(
  o: Options,
  api: ManagementApiLike,
  vhost: string,
  keptFile: string,
  seconds = 60,
): Promise<QuorumSnapshot> {
  const env = ctlEnv(o);
  const watermark = (v: string) =>
    run(`${BIN}/rabbitmqctl`, ['-q', 'set_vm_memory_high_watermark', v], { env, timeoutMs: 60_000 });
  await watermark('0');
  try {
    const deadline = Date.now() + seconds * 1000;
    let left: QueueRow[] = [];
    for (;;) {
      const rows =
        (await api.call<QueueRow[]>(
          'GET',
          `/queues/${encodeURIComponent(vhost)}?columns=name,type,messages,messages_unacknowledged`,
        )) ?? [];
      left = rows.filter(
        (q) => q.type === 'quorum' && (Number(q.messages ?? 0) > 0 || Number(q.messages_unacknowledged ?? 0) > 0),
      );
      if (left.length === 0) break;
      if (Date.now() > deadline) {
        throw new Error(
          `quorum queue(s) ${left.map((q) => `${q.name} (${q.messages ?? 0} messages)`).join(', ')} did not empty within ${seconds}s, and RabbitMQ's rename would drop what they hold: let their consumers run (mesh serve, a builder for mesh.build), then run this again.`,
        );
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    const defs = (await api.call<Defs>('GET', `/definitions/${encodeURIComponent(vhost)}`)) ?? {};
    const quorum = (defs.queues ?? []).filter((q) => q.arguments?.['x-queue-type'] === 'quorum');
    const names = new Set(quorum.map((q) => q.name));
    const kept = {
      queues: quorum,
      bindings: (defs.bindings ?? []).filter((b) => b.destination_type === 'queue' && names.has(b.destination)),
    };
    await writeAtomic(keptFile, JSON.stringify(kept) + '\n', 0o600);
    for (const q of names)
      await api.call('DELETE', `/queues/${encodeURIComponent(vhost)}/${encodeURIComponent(q)}`, undefined, true);
    return kept;
  } catch (err) {
    await watermark('0.4').catch(() => {});
    throw err;
  }
}

/** After the renamed broker started (its watermark is its config's again): the quorum queues and their bindings kept in KEPT_FILE, declared again; the file removed. */
export async function restoreQuorum(api: ManagementApiLike, vhost: string, keptFile: string): Promise<string[]> {
  if (!existsSync(keptFile)) return [];
  const s = JSON.parse(readFileSync(keptFile, 'utf8')) as QuorumSnapshot;
  if (s.queues.length)
    await api.call('POST', `/definitions/${encodeURIComponent(vhost)}`, { queues: s.queues, bindings: s.bindings });
  rmSync(keptFile, { force: true });
  return s.queues.length
    ? [
        `quorum queue(s) ${(s.queues as { name: string }[]).map((q) => q.name).join(', ')} declared again with their bindings`,
      ]
    : [];
}

export interface ManagementApiLike {
  call<T = unknown>(method: string, p: string, body?: unknown, absentOk?: boolean): Promise<T | undefined>;
}
