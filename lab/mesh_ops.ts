// What the lab does with a mesh once it is up, through the operator's own
// `mesh` on the first node: enrol a machine by token, declare, wait for the
// nodes to report what they were sent, and look at the overlay.
import { join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { LabHandle, DIST, NODE, MESH_HOST_JS, until } from './handle.js';

/** Issue a token on the first node and spend it on machine `m`, which then runs its host. */
export async function joinMachine(h: LabHandle, m: string, say: (l: string) => void): Promise<void> {
  const s = h.state.machines[m];
  if (!s) throw new Error(`no machine ${m} in this lab`);
  const issued = JSON.parse(await h.meshOk(['token', 'issue', m, '--site', s.site, '--ttl', '10m', '--json'])) as {
    token: string;
  };
  // The token reaches mesh-host on its stdin, as an operator gives it: a secret never goes on a command line.
  const out = await h.ok(m, ['/usr/bin/env', `MESH_HOST_DIR=${h.hostDir(m)}`, NODE, MESH_HOST_JS, 'enrol'], {
    input: issued.token,
  });
  say(`${m}: ${out.trim().split('\n')[0]}`);
  s.enrolled = true;
  h.save();
  await h.startHost(m);
  await h.waitLog(h.hostLogPath(m), /connected to /, 0, 60, `${m}'s host did not connect`);
}

export interface DeclaredRow {
  node: string;
  serial: number;
  queued: boolean;
}

/** Run a mesh command that changes state: the declarations it owed, as it says them (W2: no declare typed after it). */
export async function owedBy(h: LabHandle, args: string[]): Promise<DeclaredRow[]> {
  const out = JSON.parse(await h.meshOk([...args, '--json'])) as { redeclared?: DeclaredRow[] };
  if (!Array.isArray(out.redeclared)) throw new Error(`mesh ${args.join(' ')} did not say what it re-declared`);
  return out.redeclared.map((x) => ({ ...x, serial: Number(x.serial) }));
}

export interface NodeRow {
  name: string;
  state: string;
  reported_serial: number | null;
  failing: number;
}

export async function nodeRows(h: LabHandle): Promise<NodeRow[]> {
  return (JSON.parse(await h.meshOk(['node', 'list', '--json'])) as NodeRow[]).map((n) => ({
    ...n,
    reported_serial: n.reported_serial === null ? null : Number(n.reported_serial),
  }));
}

/** Until every node reported (applied) at least the serial it was just sent. */
export async function waitApplied(h: LabHandle, sent: DeclaredRow[], seconds = 90): Promise<void> {
  let last: NodeRow[] = [];
  await until(
    async () => {
      last = await nodeRows(h);
      return sent.every((d) => (last.find((n) => n.name === d.node)?.reported_serial ?? 0) >= d.serial);
    },
    seconds,
    () =>
      `nodes did not report their declarations: sent ${sent.map((d) => `${d.node}#${d.serial}`).join(', ')}; ` +
      `reported ${last.map((n) => `${n.name}#${n.reported_serial}`).join(', ')}. Host logs: ${h
        .enrolled()
        .map((m) => h.hostLogPath(m))
        .join(', ')}`,
  );
}

/**
 * Until nothing is owed (W1): the outbox is empty, and every enrolled node has
 * reported. What a change owed was put there by the change itself (W2), so this
 * waits on the mesh, not on a declare typed here.
 */
export async function waitSettled(h: LabHandle, seconds = 90): Promise<NodeRow[]> {
  let last: NodeRow[] = [];
  let owed: { node: string; serial: number }[] = [];
  await until(
    async () => {
      owed = JSON.parse(await h.meshOk(['outbox', '--json'])) as { node: string; serial: number }[];
      last = await nodeRows(h);
      return owed.length === 0 && last.every((n) => n.reported_serial !== null);
    },
    seconds,
    () =>
      `still owed: ${owed.map((o) => `${o.node}#${o.serial}`).join(', ') || 'nothing'}; never reported: ` +
      `${
        last
          .filter((n) => n.reported_serial === null)
          .map((n) => n.name)
          .join(', ') || 'none'
      }. Host logs: ${h
        .enrolled()
        .map((m) => h.hostLogPath(m))
        .join(', ')}`,
  );
  return last;
}

export interface OverlayNode {
  name: string;
  address: string;
  publicKey: string;
  hub: boolean;
}

/** The overlay as the mesh computes it (`mesh overlay show --json`), or null where the command is absent. */
export async function overlayNodes(h: LabHandle): Promise<{ interface: string; nodes: OverlayNode[] } | null> {
  const r = await h.mesh(['overlay', 'show', '--json']);
  if (r.code !== 0) return null;
  const g = JSON.parse(r.stdout) as { interface: string; nodes: OverlayNode[] };
  return { interface: g.interface, nodes: g.nodes.map((n) => ({ ...n, address: n.address.replace(/\/\d+$/, '') })) };
}

export interface Matrix {
  nodes: string[];
  ok: Record<string, Record<string, boolean>>;
}

/** Ping every ordered pair of enrolled machines over their overlay addresses. */
export async function pingMatrix(h: LabHandle, addresses: Map<string, string>): Promise<Matrix> {
  const nodes = h.enrolled().filter((m) => addresses.has(m));
  const ok: Matrix['ok'] = {};
  await Promise.all(
    nodes.flatMap((a) =>
      nodes
        .filter((b) => b !== a)
        .map(async (b) => {
          const r = await h.run(a, ['ping', '-c', '1', '-W', '1', '-q', addresses.get(b)!]);
          (ok[a] ??= {})[b] = r.code === 0;
        }),
    ),
  );
  return { nodes, ok };
}

export function allOpen(m: Matrix): boolean {
  return m.nodes.length > 1 && m.nodes.every((a) => m.nodes.every((b) => a === b || m.ok[a]?.[b]));
}

export function renderMatrix(m: Matrix, addresses: Map<string, string>): string {
  const w = Math.max(9, ...m.nodes.map((n) => n.length + 2));
  const pad = (s: string) => s.padEnd(w);
  const lines = [pad('from\\to') + m.nodes.map(pad).join('')];
  for (const a of m.nodes)
    lines.push(pad(a) + m.nodes.map((b) => pad(a === b ? '.' : m.ok[a]?.[b] ? 'ok' : 'FAIL')).join(''));
  lines.push(m.nodes.map((n) => `${n}=${addresses.get(n)}`).join('  '));
  return lines.join('\n');
}

/** Ping until every path is open or the time is up; the last matrix either way. */
export async function waitMatrix(
  h: LabHandle,
  seconds = 60,
): Promise<{ matrix: Matrix; addresses: Map<string, string> } | null> {
  const g = await overlayNodes(h);
  if (!g) return null;
  const addresses = new Map(g.nodes.map((n) => [n.name, n.address]));
  let matrix = await pingMatrix(h, addresses);
  const deadline = Date.now() + seconds * 1000;
  while (!allOpen(matrix) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    matrix = await pingMatrix(h, addresses);
  }
  return { matrix, addresses };
}

/** Write module NAME of RESOURCES beside the lab and add it to the catalogue with the first node's `mesh module add`. */
export async function moduleOf(h: LabHandle, name: string, resources: unknown[]): Promise<void> {
  const dir = join(h.dir, 'modules');
  mkdirSync(dir, { recursive: true, mode: 0o755 });
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify({ name, resources }, null, 2));
  await h.meshOk(['module', 'add', file]);
}
