// Broker nodes on b1 and b2 joined to the hub's, made with the
// operator's commands of the README ("Growing a mesh: more broker nodes"):
// the first-node bundle again with --add-broker-node, the hand-over file
// copied 0600 to the machine, and the broker node's step run there. Each
// broker node runs as a carried service its machine's mesh-host supervises
// (no systemd in the lab), its data under the machine's own folder. Nodes
// dial each broker node at its overlay address (b1 and b2 are behind NAT).
import { join } from 'node:path';
import { readFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { writeAtomic } from '../../src/sys/atomic.js';
import { DIST, NODE, type LabHandle } from '../handle.js';
import { overlayNodes } from '../mesh_ops.js';
import { ctlEnv } from '../../bundle/broker_cluster.js';
import { DEFAULT_PORTS, type Options } from '../../bundle/layout.js';
import { splitHostPort } from '../../src/wire/names.js';
import type { BrokerHop } from '../../src/home/home.js';

export const BROKER_MACHINES = ['b1', 'b2'];

export function brokerState(h: LabHandle, m: string): string {
  return m === h.hub ? h.hubState() : join(h.machineDir(m), 'broker');
}

/** The Erlang node a machine's broker runs as, once clustered (cluster.json). */
export function erlNodeOf(h: LabHandle, m: string): string | null {
  const f = join(brokerState(h, m), 'rabbitmq', 'cluster.json');
  if (!existsSync(f)) return null;
  const c = JSON.parse(readFileSync(f, 'utf8')) as { address: string; name: string };
  return `mesh-${c.name}@${c.address}`;
}

/** Make each machine a broker node joined to the hub's (idempotent: a machine already joined is left as it is). */
export async function ensureBrokerNodes(
  h: LabHandle,
  say: (l: string) => void,
  machines = BROKER_MACHINES,
): Promise<void> {
  const ov = await overlayNodes(h);
  for (const m of machines) {
    // Joined: the step removes the copied hand-over only once it has joined.
    const copy = join(h.machineDir(m), `hand-over-${m}.json`);
    if (erlNodeOf(h, m) && !existsSync(copy)) continue;
    const addr = ov?.nodes.find((n) => n.name === m)?.address;
    if (!addr) throw new Error(`${m} has no overlay address: it cannot be a broker node`);
    const started = Date.now();
    const first = await h.run(h.hub, [
      NODE,
      join(DIST, 'bundle/install.js'),
      ...h.state.bundleArgs,
      '--add-broker-node',
      m,
      '--broker-public',
      addr,
    ]);
    if (first.code !== 0)
      throw new Error(
        `the first node's step for ${m} failed: ${first.stderr.trim() || first.stdout.trim().split('\n').slice(-3).join(' | ')}`,
      );
    const made = join(h.hubState(), 'rabbitmq', `hand-over-${m}.json`);
    // scp -p in the lab: the machines share the file system, so a copy 0600 and the original removed.
    await writeAtomic(copy, readFileSync(made), 0o600);
    rmSync(made);
    const r = await h.run(m, [
      '/usr/bin/env',
      `PATH=/usr/sbin:/usr/bin:/sbin:/bin`,
      NODE,
      join(DIST, 'bundle/broker_node.js'),
      '--broker-node',
      '--join',
      h.hub,
      '--hand-over',
      copy,
      '--state',
      brokerState(h, m),
      '--host-dir',
      h.hostDir(m),
    ]);
    if (r.code !== 0)
      throw new Error(
        `${m}'s broker node step failed: ${r.stderr.trim() || r.stdout.trim().split('\n').slice(-3).join(' | ')}`,
      );
    say(
      `${m}: a broker node (${erlNodeOf(h, m)}) joined to ${h.hub}'s cluster in ${Math.round((Date.now() - started) / 1000)}s: ${r.stdout.trim().split('\n').at(-2) ?? ''}`,
    );
  }
}

/** The pid of the machine's broker node (its beam.smp, found by its node name: the service's shell, rabbitmq-server, waits on it and is not the broker). */
export function beamPid(h: LabHandle, m: string): number | null {
  const node = erlNodeOf(h, m);
  if (!node) return null;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (!readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0')[0]?.endsWith('beam.smp')) continue;
      // The node name reaches erl in its environment (RABBITMQ_NODENAME), not its argv.
      if (readFileSync(`/proc/${d}/environ`, 'utf8').split('\0').includes(`RABBITMQ_NODENAME=${node}`))
        return Number(d);
    } catch {
      /* gone */
    }
  }
  return null;
}

/** The TLS listener of a machine's broker node as the mesh records it (`mesh broker list --json`): what hosts dial and pin. */
export async function brokerHop(h: LabHandle, m: string): Promise<BrokerHop> {
  const rows = JSON.parse(await h.meshOk(['broker', 'list', '--json'])) as {
    address: string;
    fingerprint: string;
    node: string | null;
  }[];
  const r = rows.find((x) => x.node === m);
  if (!r)
    throw new Error(
      `mesh broker list names no broker node run by ${m}: ${rows.map((x) => `${x.address} (${x.node ?? '-'})`).join(', ')}`,
    );
  const { host, port } = splitHostPort(r.address);
  return { host, port, fingerprint: r.fingerprint };
}

export interface Member {
  node: string;
  state: string;
  commit: number;
}

/** A quorum queue's members as the hub's broker says (rabbitmq-queues quorum_status): each node, its Raft state and commit index. */
export async function quorumStatus(h: LabHandle, queue: string): Promise<Member[]> {
  const c = JSON.parse(readFileSync(join(h.hubState(), 'rabbitmq', 'cluster.json'), 'utf8')) as {
    address: string;
    name: string;
  };
  const o: Options = {
    state: h.hubState(),
    home: '',
    hostDir: h.hostDir(h.hub),
    name: c.name,
    site: '',
    publicHost: '',
    dialable: '',
    ports: DEFAULT_PORTS,
    roots: [],
    hostEnv: {},
    brokerAddress: c.address,
    brokerName: c.name,
  };
  const env = Object.entries(ctlEnv(o)).map(([k, v]) => `${k}=${v}`);
  const out = await h.ok(h.hub, [
    '/usr/bin/env',
    '-i',
    ...env,
    '/usr/lib/rabbitmq/bin/rabbitmq-queues',
    '-q',
    'quorum_status',
    queue,
    '--vhost',
    'mesh',
    '--formatter',
    'json',
  ]);
  return (JSON.parse(out) as Record<string, unknown>[]).map((m) => ({
    node: String(m['Node Name']),
    state: String(m['Raft State']),
    commit: Number(m['Commit Index']),
  }));
}

/** Online: the member answers as leader or follower (a dead node's member is noproc or the like). */
export const online = (m: Member) => m.state === 'leader' || m.state === 'follower';
