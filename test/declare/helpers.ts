import { mkdtempSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { adminConnect } from '../harness/rabbitmq.js';
import { servers } from '../harness/servers.js';
import { freshMesh, type Mesh, type Proc, type Host } from '../harness/mesh.js';
import { publish } from '../../src/broker/publish.js';

/** A folder a declaration may write into (MESH_HOST_ROOTS). */
export function root(): string {
  const d = mkdtempSync(join(tmpdir(), 'mesh-root-'));
  mkdirSync(d, { recursive: true });
  return d;
}

export async function addModule(mesh: Mesh, name: string, resources: unknown[]): Promise<void> {
  const f = join(mesh.home, `${name}.json`);
  writeFileSync(f, JSON.stringify({ name, resources }));
  const r = await mesh.cli(['module', 'add', f]);
  if (r.code !== 0) throw new Error(`module add ${name}: ${r.stderr}`);
}

/** `mesh ARGS` to its end: its stdout, or an error with what it said. */
export async function cli(mesh: Pick<Mesh, 'cli'>, ...args: string[]): Promise<string> {
  const r = await mesh.cli(args);
  if (r.code !== 0) throw new Error(`mesh ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

export const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Put raw bytes on a node's queue as the broker admin could: how forged and malformed messages arrive. */
export async function inject(mesh: Mesh, node: string, bytes: Buffer, type = 'declaration'): Promise<void> {
  const s = servers();
  const conn = await adminConnect(s.rabbit, mesh.vhost);
  try {
    const ch = await conn.createConfirmChannel();
    await publish(ch, '', `node.${node}`, bytes, { type });
  } finally {
    await conn.close();
  }
}

export async function until<T>(
  what: string,
  f: () => Promise<T | undefined | null | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** A running loop: a fresh mesh, `mesh serve`, and one joined host web1 that may write under ROOT only. */
export interface LiveNode {
  mesh: Mesh;
  serve: Proc;
  host: Host;
  proc: Proc;
  root: string;
}

export async function liveNode(): Promise<LiveNode> {
  const mesh = await freshMesh();
  const serve = await mesh.serve();
  const dir = root();
  const j = await mesh.joined('web1', { MESH_HOST_ROOTS: dir, MESH_HOST_RECONCILE_SECONDS: '3600' });
  // Enrolment owes the node its first declaration (its firewall, X1) with no
  // command typed (W2): the tests start from that serial 1 applied.
  await j.proc.waitFor(/applied declaration 1\b/, 30_000);
  return { mesh, serve, host: j.host, proc: j.proc, root: dir };
}

export async function stopLiveNode(l: LiveNode): Promise<void> {
  await l.mesh.stop();
  rmSync(l.root, { recursive: true, force: true });
}
