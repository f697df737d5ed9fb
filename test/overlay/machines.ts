// Real mesh-host processes inside lab machines: `nsenter -t PID -m -n node
// host/cli.js ...` with a MESH_HOST_DIR of their own, talking to the test's
// broker through their site's NAT and the lab's uplink. Everything a host
// does (wg-quick, iptables) happens in its machine's namespaces.
import { runAny } from '../../src/sys/proc.js';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { MESH_HOST, spawnProc, type Mesh, type Proc, type CliResult } from '../harness/mesh.js';
import { writeBroker } from '../../src/home/home.js';
import { up, type Lab, type Topology } from '../../lab/netns/topology.js';
import { until } from '../declare/helpers.js';

export interface Machine {
  name: string;
  dir: string;
  /** `mesh-host ARGS` inside the machine, to completion. */
  /** mesh-host inside the machine; `input` goes on its stdin (a token). */
  host(args: string[], input?: string): Promise<CliResult>;
  /** `mesh-host run` inside the machine, until stopped. */
  run(): Proc;
}

/** A lab whose machines can reach the mesh's broker: tokens issued from now on name the uplink address. */
export async function labFor(mesh: Mesh, topology: Topology): Promise<Lab> {
  const lab = await up({ ...topology, uplink: true });
  try {
    const port = mesh.broker.public.split(':').at(-1)!;
    await writeBroker({ ...mesh.broker, public: `${lab.uplinkAddress}:${port}` }, mesh.env);
  } catch (err) {
    await lab.down();
    throw err;
  }
  return lab;
}

export function machines(lab: Lab, procs: Proc[]): (name: string) => Machine {
  return (name) => {
    const dir = mkdtempSync(join(tmpdir(), `overlay-lab-${name}-`));
    const env = { ...process.env, MESH_HOST_DIR: dir, MESH_HOST_RECONCILE_SECONDS: '3600' };
    const argv = (args: string[]) => [
      '-t',
      String(lab.pid(name)),
      '-m',
      '-n',
      '--',
      process.execPath,
      MESH_HOST,
      ...args,
    ];
    return {
      name,
      dir,
      host: (args, input) => runAny('nsenter', argv(args), { env, input }),
      run: () => {
        const p = spawnProc('nsenter', argv(['run']), env);
        procs.push(p);
        return p;
      },
    };
  };
}

/** Issue M's node a token (ISSUE: its `token issue` options), enrol inside M over its NAT, start its host; the host once connected. */
export async function enrolInside(mesh: Mesh, m: Machine, issue: string[]): Promise<Proc> {
  const r = await m.host(['enrol'], await mesh.token(m.name, issue));
  if (r.code !== 0) throw new Error(`enrol ${m.name} inside its namespace failed: ${r.stderr}`);
  const run = m.run();
  await run.waitFor(/connected to /, 120_000);
  return run;
}

/**
 * Until PROC (node NAME's host) applied the newest declaration SQL holds for
 * it, read again each time (an enrolment may still be owing one); its serial.
 */
export async function appliedNewest(mesh: Mesh, proc: Proc, name: string, patience = 120_000): Promise<number> {
  let serial = 0;
  await until(
    `${name} applied its newest declaration`,
    async () => {
      const [d] = await mesh.store.admin`select max(serial)::int as s from assignment.declaration where node = ${name}`;
      serial = d!.s as number;
      return [...proc.output().matchAll(/applied declaration (\d+)\b/g)].some((m) => Number(m[1]) === serial);
    },
    patience,
  );
  return serial;
}

export async function pings(lab: Lab, from: string, to: string, tries = 5): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    const r = await lab.execAny(from, ['/usr/bin/ping', '-c1', '-W2', '-n', '-q', to]);
    if (r.code === 0) return true;
  }
  return false;
}
