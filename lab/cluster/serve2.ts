// A second `mesh serve`, on b1: a serve on a second machine needs only its
// store URLs and home. Its home (broker.json, the signing
// key) and its store URLs are files of its own on b1, 0600; it reaches the
// first node's store over the overlay, through relays on the first node's
// overlay address (the bundle keeps them on loopback), which the first node's
// declared firewall admits from b1 alone. Its brokers are a list, tried in
// turn (src/broker/turns.ts): first the node it is told (the cluster scenario
// gives b2's, over TLS pinned to the fingerprint the mesh recorded for it, a
// listener already open to the mesh), then b1's own node on loopback, then the
// first node's through the relay. Both are declared services: b1's mesh-host
// supervises the serve and the first node's the relays, as every
// long-running process of the lab is supervised (no systemd here).
import { join } from 'node:path';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { writeAtomic } from '../../src/sys/atomic.js';
import { CONTEXTS, storeVariable } from '../../src/store/contexts.js';
import { DEFAULT_PORTS } from '../../bundle/layout.js';
import { DIST, NODE, type LabHandle } from '../handle.js';
import type { BrokerHop } from '../../src/home/home.js';
import { moduleOf, owedBy, overlayNodes, waitApplied, type DeclaredRow } from '../mesh_ops.js';

export const SERVE_MACHINE = 'b1';
export const SERVE_MODULE = 'lab-serve';
export const RELAY_MODULE = 'lab-serve-relay';
const RELAY_JS = join(DIST, 'lab/cluster/relay.js');
const MESH_JS = join(DIST, 'src/cli/mesh.js');
const RELAYED = [
  {
    what: 'amqp',
    port: DEFAULT_PORTS.amqp,
    why: 'the second serve: the broker (plaintext on loopback) over the overlay',
  },
  {
    what: 'mgmt',
    port: DEFAULT_PORTS.mgmt,
    why: 'the second serve: the management API of the broker over the overlay',
  },
  { what: 'store', port: DEFAULT_PORTS.pg, why: 'the second serve: the store over the overlay' },
];

export function serveHome(h: LabHandle): string {
  return join(h.machineDir(SERVE_MACHINE), 'serve', 'home');
}
export function serveStore(h: LabHandle): string {
  return join(h.machineDir(SERVE_MACHINE), 'serve', 'store');
}
export function serveLogPath(h: LabHandle): string {
  return join(h.hostDir(SERVE_MACHINE), 'services', `${SERVE_MODULE}.log`);
}
export function servePidPath(h: LabHandle, m: string): string | null {
  const p =
    m === h.hub
      ? join(h.hostDir(h.hub), 'services', 'mesh-serve.pid')
      : join(h.hostDir(m), 'services', `${SERVE_MODULE}.pid`);
  return existsSync(p) ? p : null;
}

/**
 * Raise the second serve (idempotent); resolves once it consumes the control
 * queue on FIRST, the broker node its list begins with.
 */
export async function ensureSecondServe(h: LabHandle, say: (l: string) => void, first: BrokerHop): Promise<void> {
  const ov = await overlayNodes(h);
  const hubAddr = ov?.nodes.find((n) => n.name === h.hub)?.address;
  if (!hubAddr) throw new Error(`${h.hub} has no overlay address: the second serve has no way to its store`);
  // Its own home: the first node's broker.json with its own list of broker nodes, and the signing key (both 0600).
  const hubHome = join(h.hubState(), 'home');
  const broker = JSON.parse(readFileSync(join(hubHome, 'broker.json'), 'utf8')) as Record<string, unknown>;
  const amqp: BrokerHop[] = [
    first,
    { host: '127.0.0.1', port: DEFAULT_PORTS.amqp },
    { host: hubAddr, port: DEFAULT_PORTS.amqp },
  ];
  const text = JSON.stringify({ ...broker, amqp, management: `http://${hubAddr}:${DEFAULT_PORTS.mgmt}` }, null, 2);
  // A serve left running by an earlier run holds the list it started with: it goes first, and starts again with this one.
  const file = join(serveHome(h), 'broker.json');
  if (servePidPath(h, SERVE_MACHINE) && existsSync(file) && readFileSync(file, 'utf8') !== text)
    await removeSecondServe(h);
  mkdirSync(serveHome(h), { recursive: true, mode: 0o700 });
  mkdirSync(serveStore(h), { recursive: true, mode: 0o700 });
  await writeAtomic(file, text, 0o600);
  await writeAtomic(join(serveHome(h), 'signing.key'), readFileSync(join(hubHome, 'signing.key')), 0o600);
  const env: string[] = [`MESH_HOME=${serveHome(h)}`];
  for (const ctx of CONTEXTS) {
    const url = readFileSync(join(h.hubState(), 'store', `${ctx}.url`), 'utf8').replace('@127.0.0.1:', `@${hubAddr}:`);
    await writeAtomic(join(serveStore(h), `${ctx}.url`), url, 0o600);
    env.push(`${storeVariable(ctx)}=${join(serveStore(h), `${ctx}.url`)}`);
  }
  await moduleOf(h, RELAY_MODULE, [
    ...RELAYED.map((r) => ({
      kind: 'service',
      name: `lab-relay-${r.what}`,
      exec: [NODE, RELAY_JS, hubAddr, String(r.port), '127.0.0.1', String(r.port)],
    })),
    ...RELAYED.map((r) => ({
      kind: 'opening',
      name: `lab-serve-${r.what}`,
      proto: 'tcp',
      port: r.port,
      from: `module:${SERVE_MODULE}`,
      why: r.why,
    })),
  ]);
  await moduleOf(h, SERVE_MODULE, [
    { kind: 'service', name: SERVE_MODULE, exec: ['/usr/bin/env', ...env, NODE, MESH_JS, 'serve'] },
  ]);
  const mark = h.mark(serveLogPath(h));
  const owed: DeclaredRow[] = [
    ...(await owedBy(h, ['assign', RELAY_MODULE, h.hub])),
    ...(await owedBy(h, ['assign', SERVE_MODULE, SERVE_MACHINE])),
  ];
  await waitApplied(h, owed);
  const on = new RegExp(`consuming mesh\\.control on ${first.host.replaceAll('.', '\\.')}:${first.port}\\b`);
  if (owed.some((d) => d.node === SERVE_MACHINE)) {
    await h.waitLog(
      serveLogPath(h),
      on,
      mark,
      60,
      `the second serve on ${SERVE_MACHINE} did not consume the control queue on ${first.host}:${first.port}`,
    );
  } else {
    await h.waitLog(
      serveLogPath(h),
      on,
      0,
      60,
      `the second serve on ${SERVE_MACHINE} is not consuming the control queue on ${first.host}:${first.port}`,
    );
  }
  say(
    `a second mesh serve runs on ${SERVE_MACHINE} (supervised by its mesh-host), reaching ${h.hub}'s store over the overlay (${hubAddr}, admitted from ${SERVE_MACHINE} alone); its broker nodes in turn: ${amqp.map((a) => `${a.host}:${a.port}${a.fingerprint ? ' (TLS, pinned)' : ''}`).join(', ')}; consuming mesh.control on the first`,
  );
}

/** Take it away again: the lab is left with one serve, as the other scenarios expect. */
export async function removeSecondServe(h: LabHandle): Promise<void> {
  await waitApplied(h, [
    ...(await owedBy(h, ['unassign', SERVE_MODULE, SERVE_MACHINE])),
    ...(await owedBy(h, ['unassign', RELAY_MODULE, h.hub])),
  ]);
}

/** The serve processes running now, by machine, for `lab show`. */
export function serveProcesses(h: LabHandle): { machine: string; pid: number }[] {
  const out: { machine: string; pid: number }[] = [];
  for (const m of h.machines()) {
    const p = servePidPath(h, m);
    if (!p) continue;
    try {
      const pid = (JSON.parse(readFileSync(p, 'utf8')) as { pid: number }).pid;
      process.kill(pid, 0);
      out.push({ machine: m, pid });
    } catch {
      /* not running */
    }
  }
  return out;
}
