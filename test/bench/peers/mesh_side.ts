// mesh's side of the peers bench: N simulated hosts (sim.ts: each its own
// broker account over pinned TLS, its own queue, verify, keep, apply, report)
// behind a real `mesh serve`; one file in a module, changed with `mesh module
// add` (which re-declares every node assigned it, W2), until every host's
// report of the new declaration is recorded in SQL.
import { writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { freshMesh, MESH, runCli, type Mesh, type Proc } from '../../harness/mesh.js';
import { b64 } from '../../../src/crypto/keys.js';
import {
  insertNodes,
  createAccounts,
  startServe,
  now,
  sleep,
  cpuMeter,
  serverPids,
  describeCpu,
  type Worker,
  simHosts,
  connectHosts,
} from '../lib.js';

export interface Fleet {
  seconds: number;
  bound: string;
  detail: Record<string, unknown>;
}

async function moduleAdd(mesh: Mesh, file: string, path: string, content: string): Promise<void> {
  writeFileSync(
    file,
    JSON.stringify({
      name: 'bench',
      resources: [{ kind: 'file', path, content: b64(Buffer.from(content)), mode: '0644' }],
    }),
  );
  const r = await runCli(MESH, ['module', 'add', file], mesh.env);
  if (r.code !== 0) throw new Error(`mesh module add failed (${r.code}): ${r.stderr.slice(0, 500)}`);
}

/**
 * Until every node's newest declaration, issued at or after t0 (ms), is acknowledged: when the last
 * was recorded, ms. The newest only: an older one acknowledged first may not hold the file.
 */
async function acknowledged(mesh: Mesh, n: number, t0: number, timeoutMs: number): Promise<number> {
  const end = now() + timeoutMs;
  for (;;) {
    const [row] = await mesh.store.admin`
      select count(*)::int as n, extract(epoch from max(acknowledged_at))::float8 * 1000 as last
        from (select distinct on (node) node, issued_at, acknowledged_at from assignment.declaration order by node, serial desc) newest
       where acknowledged_at is not null and issued_at >= to_timestamp(${t0 / 1000}::float8)`;
    if (row!.n >= n) return row!.last as number;
    if (now() > end) throw new Error(`only ${row!.n} of ${n} hosts' reports were recorded within ${timeoutMs / 1000}s`);
    await sleep(100);
  }
}

function check(root: string, names: string[], path: string, content: string): void {
  for (const name of names) {
    const f = join(root, name) + path;
    let got: string;
    try {
      got = readFileSync(f, 'utf8');
    } catch {
      throw new Error(`mesh reported ${name} applied, but ${f} is missing`);
    }
    if (got !== content) throw new Error(`mesh reported ${name} applied, but ${f} does not hold the declared content`);
  }
}

/** One changed file to N hosts; hosts hold the file's previous content first, as on a running fleet. */
export async function meshFleet(
  dir: string,
  n: number,
  path: string,
  content: (gen: number) => string,
  procs: number,
): Promise<Fleet> {
  const mesh = await freshMesh();
  const root = join(dir, 'targets');
  const state = join(dir, 'state');
  mkdirSync(root, { recursive: true });
  const workers: Worker[] = [];
  let serve: Proc | undefined;
  try {
    const names = await insertNodes(mesh, n);
    const hosts = simHosts(mesh, names);
    await createAccounts(mesh, hosts);
    const mod = join(dir, 'bench-module.json');
    await moduleAdd(mesh, mod, path, content(1));
    await mesh.store.admin`insert into assignment.assignment (module, node) select 'bench', name from inventory.node`;
    serve = await startServe(mesh); // its start declares every node whose composition changed: all of them, with generation 1
    await connectHosts(mesh, hosts, Math.min(procs, n), workers, { root, stateRoot: state, ownRoot: true });
    const d = await runCli(MESH, ['declare', '--all'], mesh.env);
    if (d.code !== 0) throw new Error(`mesh declare --all failed (${d.code}): ${d.stderr.slice(0, 500)}`);
    await acknowledged(mesh, n, 0, 300_000);
    check(root, names, path, content(1));
    await sleep(2000);

    const pids = serverPids();
    const servePid = serve.child.pid!;
    const meter = cpuMeter({
      serve: () => [servePid],
      rabbitmq: () => pids.rabbit,
      postgres: () => serverPids().pg,
      hosts: () => workers.map((w) => w.child.pid!),
    });
    const t0 = now();
    await moduleAdd(mesh, mod, path, content(2));
    const cli = (now() - t0) / 1000;
    const last = await acknowledged(mesh, n, t0, 300_000);
    const cpu = meter.stop();
    check(root, names, path, content(2));
    return {
      seconds: (last - t0) / 1000,
      bound: `mesh module add returned in ${cli.toFixed(2)} s (composed, signed, owed every node); ${describeCpu(cpu)}`,
      detail: { cli, cpu },
    };
  } finally {
    await Promise.allSettled(workers.map((w) => w.stop()));
    await serve?.stop();
    await mesh.stop().catch((e) => console.error(`[peers] cleanup: ${(e as Error).message}`));
  }
}
