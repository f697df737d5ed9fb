// Bring a lab up and take it down.
//
//   internet (203.0.113.0/24)
//     router a (NAT; UDP 51820 and TCP 5671 forwarded)  ── hub: the first node (bundle)
//     router b (NAT, nothing forwarded)                  ── b1, b2 (enrolled), b3 (joins in a scenario)
//
// The hub is installed by the first-node bundle inside its namespaces, so
// its store, broker and control plane live there with a state folder of their
// own; the others enrol with tokens the hub issues and run mesh-host.
// `down` removes exactly what `up` made: every process in the lab's
// namespaces, the namespaces (their veths and bridges go with them), the folder.
import { rmSync, mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { up as topologyUp } from './netns/topology.js';
import { procStat } from '../host/apply/proc.js';
import { LabHandle, labDir, LAB_HOST_ENV, sleep, type LabState } from './handle.js';
import { runAny } from '../src/sys/proc.js';
import { joinMachine, waitSettled, waitMatrix, renderMatrix, allOpen } from './mesh_ops.js';
import { serveProcesses } from './cluster/serve2.js';

export const HUB = 'hub';
const SITES = [
  { name: 'a', machines: [HUB], forwards: [{ udp: 51820, to: HUB }] },
  { name: 'b', machines: ['b1', 'b2', 'b3'] },
];
/** Enrolled at bring-up; b3 is left for the join scenario. */
export const INITIAL = ['b1', 'b2'];

export interface UpOptions {
  dir?: string;
  say?: (l: string) => void;
}

export async function labUp(opts: UpOptions = {}): Promise<LabHandle> {
  const dir = opts.dir ?? labDir();
  const say = opts.say ?? ((l: string) => console.log(l));
  const existing = LabHandle.load(dir);
  if (existing) {
    if (await existing.alive(existing.hub)) return existing;
    say(`a lab in ${dir} was left half made; taking it down first`);
    await labDown({ dir, say });
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'm'), { recursive: true, mode: 0o755 });

  const started = Date.now();
  const topo = await topologyUp({ sites: SITES });
  const state: LabState = {
    id: topo.id,
    dir,
    namespaces: [
      `${topo.id}-inet`,
      ...SITES.map((s) => `${topo.id}-r${s.name}`),
      ...SITES.flatMap((s) => s.machines.map((m) => `${topo.id}-${m}`)),
    ],
    hub: HUB,
    hubPublic: topo.publicAddress('a'),
    machines: {},
    bundleArgs: [],
  };
  for (const s of SITES) {
    for (const m of s.machines) {
      const pid = topo.pid(m);
      state.machines[m] = { site: s.name, lan: topo.lanAddress(m), pid, pidStart: (await procStat(pid))?.start ?? '' };
    }
  }
  const h = new LabHandle(state);
  h.save();
  say(`lab ${state.id}: namespaces up (internet, routers a and b, ${Object.keys(state.machines).join(', ')})`);

  try {
    for (const m of h.machines()) {
      mkdirSync(h.machineDir(m), { recursive: true, mode: 0o755 });
      // /srv of its own for what declarations write; and where the machine
      // has systemd, a /run/systemd that says it has not: a service the lab
      // raises must live in these namespaces, not be handed to the machine's
      // real init.
      await h.ok(m, [
        '/bin/sh',
        '-c',
        'mount -t tmpfs -o mode=0755 tmpfs /srv && if [ -d /run/systemd ]; then mount -t tmpfs -o mode=0755 tmpfs /run/systemd; fi',
      ]);
    }
    // The broker's TLS port, forwarded like the overlay's UDP port.
    await topo.execIn('router:a', [
      'nft',
      'add',
      'rule',
      'ip',
      'lab',
      'prerouting',
      'iifname',
      'wan',
      'tcp',
      'dport',
      '5671',
      'dnat',
      'to',
      `${h.state.machines[HUB]!.lan}:5671`,
    ]);

    say(`${HUB}: running the first-node bundle`);
    const hostEnvFlags = Object.entries(LAB_HOST_ENV)
      .filter(([k]) => k !== 'MESH_HOST_ROOTS')
      .flatMap(([k, v]) => ['--host-env', `${k}=${v}`]);
    h.state.bundleArgs = [
      '--state',
      h.hubState(),
      '--name',
      HUB,
      '--site',
      'a',
      '--public',
      state.hubPublic,
      '--dialable',
      `${state.hubPublic}:51820`,
      '--roots',
      LAB_HOST_ENV.MESH_HOST_ROOTS!,
      ...hostEnvFlags,
      // The web console, supervised by the hub's mesh-host, on the hub's own loopback.
      '--console',
      '127.0.0.1:7780',
    ];
    h.save();
    const b = await h.runBundle((l) => say(`  ${HUB}| ${l}`));
    if (b.code !== 0) throw new Error(`the bundle failed on ${HUB}: ${b.stderr.trim()}`);
    h.state.machines[HUB]!.first = true;
    h.state.machines[HUB]!.enrolled = true;
    h.save();

    const hubbed = await h.mesh(['overlay', 'hub', HUB]);
    say(
      hubbed.code === 0
        ? `${HUB}: ${hubbed.stdout.trim()}`
        : `overlay hub: not available here (${hubbed.stderr.trim()})`,
    );

    for (const m of INITIAL) await joinMachine(h, m, say);
    // Each enrolment owed every node it changed a declaration (W2): nothing typed here.
    const nodes = await waitSettled(h);
    say(
      `every node's newest declaration delivered: ${nodes.map((n) => `${n.name}#${n.reported_serial}`).join(', ')} reported`,
    );
    say(`lab up in ${Math.round((Date.now() - started) / 1000)}s`);
  } catch (err) {
    say(`bring-up failed: ${(err as Error).message}`);
    say(`the lab is left as it is for a look (logs under ${dir}); take it down with: npm run lab -- down`);
    throw err;
  }
  return h;
}

/** Print the nodes, the overlay graph and the ping matrix; true when every path is open. */
export async function labShow(h: LabHandle, say: (l: string) => void = console.log): Promise<boolean> {
  say('\n$ mesh node list');
  say((await h.meshOk(['node', 'list'])).trimEnd());
  // The control planes running (the cluster scenario adds one on b1 for its run).
  say(
    `\nmesh serve running on: ${
      serveProcesses(h)
        .map((s) => `${s.machine} (pid ${s.pid})`)
        .join(', ') || 'no machine'
    }`,
  );
  say('\n$ mesh overlay show');
  const g = await h.mesh(['overlay', 'show']);
  say(g.code === 0 ? g.stdout.trimEnd() : `(not available: ${g.stderr.trim()})`);
  const m = await waitMatrix(h);
  if (!m) {
    say('\nno ping matrix: this build has no `mesh overlay show`, so the lab cannot learn the overlay addresses.');
    return false;
  }
  say('\nping over the overlay (row pings column):');
  say(renderMatrix(m.matrix, m.addresses));
  const open = allOpen(m.matrix);
  say(open ? `all ${m.matrix.nodes.length * (m.matrix.nodes.length - 1)} paths open` : 'NOT every path is open');
  return open;
}

export interface DownOptions {
  dir?: string;
  say?: (l: string) => void;
}

/** Everything `up` made, gone: processes, namespaces, the folder. Safe to run twice. */
export async function labDown(opts: DownOptions = {}): Promise<void> {
  const dir = opts.dir ?? labDir();
  const say = opts.say ?? ((l: string) => console.log(l));
  const h = LabHandle.load(dir);
  if (!h) {
    say(`no lab in ${dir}`);
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    return;
  }
  const namespaces = h.state.namespaces;
  const pidsIn = async () => {
    const all: number[] = [];
    for (const n of namespaces) {
      const r = await runAny('ip', ['netns', 'pids', n]);
      if (r.code === 0) all.push(...r.stdout.split('\n').filter(Boolean).map(Number));
    }
    return all;
  };
  const signal = (pids: number[], sig: NodeJS.Signals) => {
    for (const p of pids) {
      try {
        process.kill(p, sig);
      } catch {
        /* gone */
      }
    }
  };
  // TERM first: PostgreSQL and RabbitMQ shut down cleanly (and release what
  // they hold outside the namespace); whatever is left after 15 s is killed.
  let pids = await pidsIn();
  const stopped = pids.length;
  const holders = new Set(Object.values(h.state.machines).map((m) => m.pid));
  signal(
    pids.filter((p) => !holders.has(p)),
    'SIGTERM',
  );
  for (let i = 0; i < 60 && (await pidsIn()).some((p) => !holders.has(p)); i++) await sleep(250);
  pids = await pidsIn();
  signal(pids, 'SIGKILL');
  for (let i = 0; i < 40 && (await pidsIn()).length; i++) await sleep(100);
  for (const n of [...namespaces].reverse()) {
    for (let i = 0; i < 20; i++) {
      const r = await runAny('ip', ['netns', 'del', n]);
      if (r.code === 0 || /No such file|does not exist/.test(r.stderr)) break;
      await sleep(100);
    }
  }
  const left = (await runAny('ip', ['netns', 'list'])).stdout.split('\n').filter((l) => l.startsWith(`${h.state.id}-`));
  if (left.length) throw new Error(`namespaces left behind: ${left.join(', ')}`);
  rmSync(dir, { recursive: true, force: true });
  say(
    `lab ${h.state.id} down: ${stopped} process(es) stopped, ${namespaces.length} namespaces removed, ${dir} removed`,
  );
}
