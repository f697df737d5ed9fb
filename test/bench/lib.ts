// What every benchmark shares: the figure format (each beside a limit measured
// in the same run), bench-results.json, the table, and the evidence of what
// bounds a figure: CPU per process while it was measured and a CPU profile.
// Speed is measured here only, never asserted in a test.
import { readFileSync, writeFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join, basename } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import amqp from 'amqplib';
import { servers } from '../harness/servers.js';
import { spawnProc, MESH, START_REDECLARED, type Mesh, type Proc } from '../harness/mesh.js';
import { Accounts } from '../../src/broker/accounts.js';
import { management } from '../../src/broker/admin.js';
import { QUORUM } from '../../src/broker/topology.js';
import { b64 } from '../../src/crypto/keys.js';
import { run } from '../../src/sys/proc.js';
import { BIN } from '../harness/rabbitmq.js';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const RESULTS = join(REPO, 'bench-results.json');
export const SIM = fileURLToPath(new URL('./sim.js', import.meta.url));

export const now = () => performance.timeOrigin + performance.now();
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const envInt = (name: string, dflt: number) => Number(process.env[name] ?? dflt);

export interface Figure {
  id: string;
  what: string;
  value: number;
  unit: string;
  /** The raw limit it is compared with, measured in the same run. */
  limit?: { what: string; value: number; unit: string };
  /** value / limit.value. */
  ratio?: number;
  target?: { text: string; met: boolean };
  /** What bounds it, from the CPU shares and profile of this run. */
  bound?: string;
  detail?: Record<string, unknown>;
}

export function figure(f: Omit<Figure, 'ratio'>): Figure {
  return { ...f, ratio: f.limit && f.limit.value > 0 ? f.value / f.limit.value : undefined };
}

const fmt = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

/** One row per figure, then the bound of each. */
export function render(figs: Figure[]): string {
  const rows = figs.map((f) => [
    f.what,
    `${fmt(f.value)} ${f.unit}`,
    f.limit ? `${fmt(f.limit.value)} ${f.limit.unit} (${f.limit.what})` : '-',
    f.ratio === undefined ? '-' : f.ratio.toFixed(2),
    f.target ? `${f.target.met ? 'MET   ' : 'MISSED'} ${f.target.text}` : '-',
  ]);
  const head = ['FIGURE', 'VALUE', 'LIMIT (same run)', 'RATIO', 'TARGET'];
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(w[i]!))
      .join('  ')
      .trimEnd();
  const out = [line(head), ...rows.map(line)];
  const bounds = figs.filter((f) => f.bound).map((f) => `  ${f.what}: ${f.bound}`);
  if (bounds.length) out.push('', 'bounded by:', ...bounds);
  return out.join('\n');
}

interface ResultsFile {
  run: string;
  machine: Record<string, unknown>;
  sections: Record<string, { at: string; load: string; seconds: number; figures: Figure[] }>;
}

/** Merge one bench's figures into bench-results.json; a file from another run is replaced. */
export function record(section: string, figs: Figure[], seconds: number, load: string): void {
  const run = process.env.MESH_TEST_SERVERS ?? 'direct';
  let file: ResultsFile | undefined;
  try {
    file = JSON.parse(readFileSync(RESULTS, 'utf8')) as ResultsFile;
  } catch {
    /* none yet */
  }
  if (!file || file.run !== run) {
    file = {
      run,
      machine: {
        cpus: (readFileSync('/proc/cpuinfo', 'utf8').match(/^processor/gm) ?? []).length,
        node: process.version,
      },
      sections: {},
    };
  }
  file.sections[section] = { at: new Date().toISOString(), load, seconds, figures: figs };
  writeFileSync(RESULTS, JSON.stringify(file, null, 2) + '\n');
}

export function readResults(): ResultsFile | undefined {
  try {
    return JSON.parse(readFileSync(RESULTS, 'utf8')) as ResultsFile;
  } catch {
    return undefined;
  }
}

export const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** Runs a bench: prints its table, records it, exits non-zero only when it could not measure. */
export async function bench(section: string, body: (figs: Figure[]) => Promise<void>): Promise<void> {
  // A bench starts on servers the one before it has finished with: PostgreSQL writing out and
  // vacuuming a million nodes' rows, the broker dropping their queues, would be charged to it.
  const pids = serverPids();
  const waited = await settle([...pids.pg, ...pids.rabbit], 180_000);
  const t0 = now();
  const load = `${loadavg()} (the servers settled in ${waited.toFixed(0)}s)`;
  const figs: Figure[] = [];
  let code = 0;
  try {
    await body(figs);
    if (figs.length === 0) throw new Error('measured nothing');
    for (const f of figs) if (!Number.isFinite(f.value)) throw new Error(`${f.what} is not a number (${f.value})`);
  } catch (err) {
    console.error(`[bench ${section}] could not measure: ${(err as Error).stack ?? err}`);
    code = 1;
  }
  const seconds = (now() - t0) / 1000;
  if (figs.length) {
    console.log(`\n== ${section} (${seconds.toFixed(0)}s, load average at start ${load}) ==\n${render(figs)}\n`);
    if (code === 0) record(section, figs, seconds, load);
  }
  process.exit(code);
}

// ---- CPU: who was busy while a figure was measured -------------------------

const TICK = 100; // USER_HZ on Linux

function procTicks(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // utime, stime, and cutime, cstime: the time of children it has reaped, so a
    // PostgreSQL backend that exits before the last sample still counts.
    return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  } catch {
    return 0;
  }
}

function children(ppid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]) === ppid) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

function machineBusy(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = f[3]! + f[4]!;
  const total = f.reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}

/** Our PostgreSQL (postmaster and its backends) and our RabbitMQ (its beam), never another run's. */
export function serverPids(): { pg: number[]; rabbit: number[] } {
  const s = servers();
  const pg: number[] = [];
  try {
    const pm = Number(readFileSync(join(s.tmp, 'pg', 'pgdata', 'postmaster.pid'), 'utf8').split('\n')[0]);
    if (pm) pg.push(pm, ...children(pm));
  } catch {
    /* layout differs: leave pg out */
  }
  return { pg, rabbit: beamPids((arg) => arg === s.rabbit.dir) };
}

/** The RabbitMQ nodes (beam.smp) one of whose arguments passes MINE: the run's broker by its dir, a cluster by the dir above its nodes'. */
export function beamPids(mine: (arg: string) => boolean): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes('beam.smp') && cmd.split('\0').some(mine)) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

export interface CpuShare {
  seconds: number;
  cores: Record<string, number>;
  machineBusy: number;
}

/** Cores used by each named group of processes between start() and stop(). */
export function cpuMeter(groups: Record<string, () => number[]>) {
  const ticks = () =>
    Object.fromEntries(Object.entries(groups).map(([k, f]) => [k, f().reduce((a, p) => a + procTicks(p), 0)]));
  const t0 = now();
  const a = ticks();
  const m0 = machineBusy();
  return {
    stop(): CpuShare {
      const secs = (now() - t0) / 1000;
      const b = ticks();
      const m1 = machineBusy();
      const cores = Object.fromEntries(
        Object.keys(groups).map((k) => [k, +((b[k]! - a[k]!) / TICK / secs).toFixed(2)]),
      );
      return {
        seconds: +secs.toFixed(2),
        cores,
        machineBusy: +((m1.busy - m0.busy) / Math.max(1, m1.total - m0.total)).toFixed(2),
      };
    },
  };
}

export function describeCpu(c: CpuShare): string {
  // Cores on average, and the CPU-seconds they add up to: work that must share two cores.
  return (
    `${Object.entries(c.cores)
      .map(([k, v]) => `${k} ${v.toFixed(2)} (${(v * c.seconds).toFixed(1)} cpu-s)`)
      .join(', ')} cores over ${c.seconds.toFixed(1)} s; ` +
    `machine ${(c.machineBusy * 100).toFixed(0)}% busy (2 cores, shared)`
  );
}

// ---- CPU profile: what a process spent its time on -------------------------

export interface ProfileSummary {
  idle: number;
  gc: number;
  categories: Record<string, number>;
  top: { fn: string; share: number }[];
}

function category(url: string, fn: string): string {
  if (fn === '(idle)') return 'idle';
  if (fn === '(garbage collector)') return 'gc';
  if (fn === '(program)') return 'program';
  if (url.includes('node_modules/postgres')) return 'postgres.js';
  if (
    url.includes('node_modules/amqplib') ||
    url.includes('node_modules/@acuminous') ||
    url.includes('buffer-more-ints')
  )
    return 'amqplib';
  if (url.includes('node_modules/@noble')) return 'ed25519/x25519 (noble)';
  if (url.includes('/dist') && url.includes('/src/')) return 'mesh src';
  if (url.includes('/dist') && url.includes('/host/')) return 'mesh host';
  if (url.includes('/dist') && url.includes('/test/')) return 'bench harness';
  if (url.startsWith('node:') || url === '') return 'node internals';
  return 'other';
}

/** Self time by category and the top functions, from the .cpuprofile files in dir. */
export function summarizeProfile(dir: string): ProfileSummary | undefined {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (!files.length) return undefined;
  const byCat: Record<string, number> = {};
  const byFn: Record<string, number> = {};
  let total = 0;
  for (const f of files) {
    const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as {
      nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
      samples: number[];
      timeDeltas: number[];
    };
    const byId = new Map(p.nodes.map((n) => [n.id, n.callFrame]));
    p.samples.forEach((id, i) => {
      const cf = byId.get(id)!;
      const dt = p.timeDeltas[i] ?? 0;
      total += dt;
      const cat = category(cf.url, cf.functionName);
      byCat[cat] = (byCat[cat] ?? 0) + dt;
      if (!['idle', 'gc', 'program'].includes(cat)) {
        const key = `${cf.functionName || '(anonymous)'} ${basename(cf.url)}:${cf.lineNumber + 1}`;
        byFn[key] = (byFn[key] ?? 0) + dt;
      }
    });
  }
  const share = (v: number) => +(v / Math.max(1, total)).toFixed(3);
  const categories = Object.fromEntries(
    Object.entries(byCat)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => [k, share(v)]),
  );
  const top = Object.entries(byFn)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 6)
    .map(([fn, v]) => ({ fn, share: share(v) }));
  return { idle: categories.idle ?? 0, gc: categories.gc ?? 0, categories, top };
}

export function describeProfile(name: string, p: ProfileSummary | undefined): string {
  if (!p) return `${name}: no profile`;
  const cats = Object.entries(p.categories)
    .filter(([, v]) => v >= 0.03)
    .map(([k, v]) => `${k} ${(v * 100).toFixed(0)}%`)
    .join(', ');
  const top = p.top
    .slice(0, 3)
    .map((t) => `${t.fn} ${(t.share * 100).toFixed(1)}%`)
    .join('; ');
  return `${name} profile: ${cats}; top self time: ${top}`;
}

// ---- Processes ----------------------------------------------------------------

export function rssOf(pid: number): { rssMB: number; peakMB: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
  return { rssMB: +(kb('VmRSS') / 1024).toFixed(1), peakMB: +(kb('VmHWM') / 1024).toFixed(1) };
}

/** The RSS of a bare `node` doing nothing: the floor any Node program stands on. */
export async function bareNodeRss(): Promise<number> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e9)'], { stdio: 'ignore' });
  try {
    await sleep(1500);
    return rssOf(child.pid!).rssMB;
  } finally {
    child.kill('SIGKILL');
  }
}

/** `mesh serve` for a bench: its own process, optionally profiled (the profile is written as it exits); WAITMS for it to consume. */
export async function startServe(mesh: Mesh, profileDir?: string, waitMs = 60_000): Promise<Proc> {
  const args = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir, MESH, 'serve'] : [MESH, 'serve'];
  const p = spawnProc(process.execPath, args, mesh.env);
  await p.waitFor(/consuming mesh\.control/, waitMs);
  // Its start's re-declare (every node owed) runs beside the consuming: a bench measures after it.
  await p.waitFor(START_REDECLARED, waitMs);
  return p;
}

export function tempDir(what: string): string {
  return mkdtempSync(join(tmpdir(), `mesh-bench-${what}-`));
}

/**
 * A bench's end, however its body ended: SERVE (when started) and the mesh
 * stopped, saying what failed rather than throwing (the figures are kept),
 * and the bench's temp DIRS removed.
 */
export async function tearDown(mesh: Mesh, serve: Proc | undefined, ...dirs: string[]): Promise<void> {
  await serve?.stop();
  await mesh.stop().catch((e) => console.error(`[bench] cleanup: ${(e as Error).message}`));
  for (const d of dirs) removeDir(d);
}

export function removeDir(d: string): void {
  if (!process.env.MESH_TEST_KEEP) rmSync(d, { recursive: true, force: true });
}

// ---- A fleet at scale, straight into SQL and the broker --------------------------

// Six digits at least, as insertNodes names them in SQL (lpad would cut a seventh).
export const nodeNameOf = (i: number) => `b${String(i).padStart(6, '0')}`;

/**
 * N enrolled nodes b000001.., with keys that are bytes of the right length
 * (nothing here seals to them). With SITES, an overlay shaped like a fleet:
 * nodes dealt over that many sites, the first of each site dialable, and the
 * first HUBS of those hubs, so every node has a wireguard interface and the
 * peer graph is real (each hub peers with every node).
 */
export async function insertNodes(mesh: Mesh, n: number, overlay?: { sites: number; hubs: number }): Promise<string[]> {
  const sites = overlay?.sites ?? 0;
  // The default overlay range (a /16) holds 65,534 nodes: a fleet past it gets a /12, as an operator would set.
  if (n > 60_000) await mesh.store.admin`update overlay.settings set network = '10.64.0.0/12'`;
  await mesh.store.admin`
    insert into inventory.node (name, site, dialable, identity_key, overlay_key, sealing_key, enrolled_at)
    select 'b' || lpad(i::text, greatest(6, length(i::text)), '0'),
           case when ${sites}::int > 0 then 's' || ((i - 1) % ${sites}::int) else 'default' end,
           case when ${sites}::int > 0 and i <= ${sites}::int then 'b' || lpad(i::text, greatest(6, length(i::text)), '0') || '.bench:51820' end,
           k, k, k, now()
      from generate_series(1, ${n}::int) i,
           lateral (select decode(md5(i::text) || md5('k' || i), 'hex') as k) x`;
  if (overlay?.hubs)
    await mesh.store
      .admin`insert into overlay.hub (node) select 'b' || lpad(i::text, greatest(6, length(i::text)), '0') from generate_series(1, ${Math.min(overlay.hubs, sites)}::int) i`;
  return Array.from({ length: n }, (_, i) => nodeNameOf(1 + i));
}

/** Bench 3's fleet: N nodes shaped by OVERLAY (100 sites and 2 hubs unless told), each with its own two files under ROOT; their names. */
export async function fanoutFleet(
  mesh: Mesh,
  n: number,
  root: string,
  overlay = { sites: 100, hubs: 2 },
): Promise<string[]> {
  const names = await insertNodes(mesh, n, overlay);
  await perNodeFiles(mesh, root);
  return names;
}

/**
 * Per-node resources, as a context will contribute them (two files under
 * ROOT/NODE/), defined in this throwaway bench database only: every node gets
 * its own paths, so simulated hosts sharing a process never share a file.
 */
export async function perNodeFiles(mesh: Mesh, root: string): Promise<void> {
  const lit = root.replace(/'/g, "''");
  // Added to what the provision context already declares, so composing costs what it really costs.
  const [{ def }] = (await mesh.store
    .admin`select pg_get_viewdef('provision.node_resources'::regclass) as def`) as unknown as { def: string }[];
  await mesh.store.admin.unsafe(`
    create or replace view provision.node_resources as
    select * from (${def.trim().replace(/;$/, '')}) existing
    union all
    select n.name as node,
           jsonb_build_object('id', 'file:' || p, 'kind', 'file', 'path', p, 'mode', '0644',
                              'content', translate(encode(convert_to(c, 'utf8'), 'base64'), E'\\n', '')) as resource
      from inventory.enrolled_node n,
           lateral (values ('${lit}/' || n.name || '/node.conf', 'node ' || n.name || E'\\n' || repeat('listen 10.0.0.1:443' || E'\\n', 12)),
                           ('${lit}/' || n.name || '/motd', repeat('welcome to ' || n.name || E'\\n', 20))) v(p, c)`);
}

/** The mesh's first broker node (the run's broker, or a cluster's first): its loopback AMQP port. */
const firstAmqp = (mesh: Mesh) => {
  const a = mesh.broker.amqp;
  return Array.isArray(a) ? a[0]! : a;
};

export async function admin(mesh: Mesh): Promise<amqp.ChannelModel> {
  const a = firstAmqp(mesh);
  return amqp.connect({
    protocol: 'amqp',
    hostname: a.host,
    port: a.port,
    username: mesh.broker.user,
    password: mesh.broker.password,
    vhost: mesh.vhost,
  });
}

/** F on every node's queue, as the admin over AMQP (no account), over a few channels at once. */
async function onQueues(
  mesh: Mesh,
  names: string[],
  f: (ch: amqp.Channel, queue: string) => Promise<unknown>,
  channels = 8,
): Promise<void> {
  const conn = await admin(mesh);
  // A connection-level refusal (a quorum declare's cluster_not_formed) rejects the step in flight; unheard,
  // it crashed the bench past its finally and left a three-node cluster running with nobody to stop it.
  conn.on('error', () => {});
  try {
    const todo = [...names];
    await Promise.all(
      Array.from({ length: channels }, async () => {
        const ch = await conn.createChannel();
        for (let n = todo.shift(); n; n = todo.shift()) await f(ch, `node.${n}`);
        await ch.close();
      }),
    );
  } finally {
    await conn.close();
  }
}

/** Each node's durable queue, as createNode makes it: quorum on a cluster (management().quorumNodeQueues), else classic. */
export const createQueues = (mesh: Mesh, names: string[], channels?: number) => {
  const args = management(mesh.broker).quorumNodeQueues ? { ...QUORUM } : {};
  return onQueues(mesh, names, (ch, q) => ch.assertQueue(q, { durable: true, arguments: args }), channels);
};

/**
 * The run's broker may use RELATIVE of the machine's memory before it blocks publishers, as an
 * operator sets it for a broker of many queues (rabbitmqctl set_vm_memory_high_watermark): at
 * 100,000 node queues RabbitMQ 3.10 holds about 12 GB, past its default 0.4 of 24 GB.
 */
export async function brokerWatermark(relative: number): Promise<void> {
  const r = servers().rabbit;
  await run(join(BIN, 'rabbitmqctl'), ['-q', '-n', r.nodename, 'set_vm_memory_high_watermark', String(relative)], {
    env: { ...process.env, ...r.ctlEnv },
    timeoutMs: 60_000,
  });
}

/** The broker's memory now, and its limit, from its management API. */
export async function brokerMemory(): Promise<{ usedMB: number; limitMB: number; queues: number }> {
  const r = servers().rabbit;
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${r.mgmtPort}/api${path}`, {
      headers: { authorization: `Basic ${Buffer.from(`${r.admin.user}:${r.admin.password}`).toString('base64')}` },
    });
    if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
    return res.json() as Promise<unknown>;
  };
  const [node] = (await get('/nodes')) as { mem_used: number; mem_limit: number }[];
  const overview = (await get('/overview')) as { object_totals: { queues: number } };
  return { usedMB: node!.mem_used / 1e6, limitMB: node!.mem_limit / 1e6, queues: overview.object_totals.queues };
}

/** Empty every node's queue, so each measurement finds the queues as the last one did not leave them. */
export const purgeQueues = (mesh: Mesh, names: string[], channels?: number) =>
  onQueues(mesh, names, (ch, q) => ch.purgeQueue(q), channels);

/** Delete every node's queue: the run removes a bench's vhost after it through the management API, whose one
 * request cannot delete 100,000 queues within its timeout (the queues would stay for every bench after). */
export const deleteQueues = (mesh: Mesh, names: string[], channels?: number) =>
  onQueues(mesh, names, (ch, q) => ch.deleteQueue(q), channels);

/** Wait until PIDS use under a tenth of a core for 2 s (at most MAXMS, a minute unless told): a broker still writing out the last measurement would be charged to the next. */
export async function settle(pids: number[], maxMs = 60_000): Promise<number> {
  const t0 = now();
  while (now() - t0 < maxMs) {
    const m = cpuMeter({ p: () => pids });
    await sleep(2000);
    if ((m.stop().cores.p ?? 0) < 0.1) break;
  }
  return (now() - t0) / 1000;
}

/** The node's own broker account and queue through the management API, as `mesh token issue` makes them. */
export async function createAccounts(
  mesh: Mesh,
  nodes: { name: string; password: string }[],
  concurrency = 12,
): Promise<void> {
  const acc = new Accounts(management(mesh.broker));
  const todo = [...nodes];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let n = todo.shift(); n; n = todo.shift()) await acc.createNode(n.name, n.password);
    }),
  );
}

/**
 * An account allowed to set another account's user_id (RabbitMQ's impersonator
 * tag): it stands in for many nodes' heards over a few connections. Removed
 * with the mesh (its name carries the mesh's prefix).
 */
export async function impersonator(mesh: Mesh): Promise<amqp.ChannelModel> {
  const user = `${mesh.prefix}bench-impersonator`;
  const password = randomBytes(18).toString('base64url');
  const { api } = new Accounts(management(mesh.broker));
  await api.putUser(user, password, 'impersonator');
  await api.putPermissions(mesh.vhost, user, {
    configure: '^bench\\..*',
    write: '^(mesh|bench\\..*)$',
    read: '^bench\\..*',
  });
  const a = firstAmqp(mesh);
  return amqp.connect({
    protocol: 'amqp',
    hostname: a.host,
    port: a.port,
    username: user,
    password,
    vhost: mesh.vhost,
  });
}

/** Mean milliseconds of one step done one at a time, as serve's handler chain does it. */
export async function sequentialMs(count: number, step: (i: number) => Promise<unknown>): Promise<number> {
  await step(-1); // warm
  const t0 = now();
  for (let i = 0; i < count; i++) await step(i);
  return (now() - t0) / count;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

// ---- Simulated hosts in a few worker processes (sim.ts) ----------------------------

export interface Worker {
  child: ChildProcess;
  send(m: unknown): void;
  next<T = any>(type: string, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

export function worker(): Worker {
  const child = fork(SIM, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const inbox: any[] = [];
  const waiters: (() => void)[] = [];
  child.on('message', (m) => {
    inbox.push(m);
    for (const w of waiters.splice(0)) w();
  });
  child.on('exit', () => {
    for (const w of waiters.splice(0)) w();
  });
  return {
    child,
    send: (m) => child.send(m as never),
    async next(type, timeoutMs = 120_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const i = inbox.findIndex((m) => m.type === type || m.type === 'error');
        if (i >= 0) {
          const m = inbox.splice(i, 1)[0];
          if (m.type === 'error') throw new Error(`simulated hosts failed: ${m.message}`);
          return m;
        }
        if (child.exitCode !== null) throw new Error(`simulated hosts exited (${child.exitCode}) before ${type}`);
        if (Date.now() > end) throw new Error(`simulated hosts sent no ${type} within ${timeoutMs / 1000}s`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 1000);
        });
      }
    },
    async stop() {
      if (child.exitCode !== null) return;
      const done = new Promise((r) => child.once('exit', r));
      try {
        child.send({ type: 'stop' });
      } catch {
        child.kill('SIGKILL');
      }
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await done;
      clearTimeout(t);
    },
  };
}

/** Split items over k workers, round robin. */
export function deal<T>(items: T[], k: number): T[][] {
  const out: T[][] = Array.from({ length: k }, () => []);
  items.forEach((x, i) => out[i % k]!.push(x));
  return out;
}

/** The module file both plan benches change: app.json in DIR, a file and a service restarted on it, at content V. */
export function appModule(dir: string, v: string): string {
  const f = join(dir, 'app.json');
  writeFileSync(
    f,
    JSON.stringify({
      name: 'app',
      resources: [
        { kind: 'file', path: '/etc/app.conf', content: b64(Buffer.from(v)), mode: '0644' },
        { kind: 'service', name: 'app', exec: ['/usr/bin/app'], restartOn: ['file:/etc/app.conf'] },
      ],
    }),
  );
  return f;
}

/** A simulated host for each of NAMES: its broker account's name and a fresh password (createAccounts makes the accounts). */
export const simHosts = (mesh: Mesh, names: string[]) =>
  names.map((name) => ({ name, user: `${mesh.prefix}node.${name}`, password: randomBytes(24).toString('base64url') }));

/**
 * HOSTS dealt over K new workers (pushed onto WORKERS as each starts), each
 * connecting its share to the run's broker over pinned TLS, to keep and apply
 * under DIRS.root with their state under DIRS.stateRoot; resolves once every
 * worker in WORKERS is ready (five minutes at the most).
 */
export async function connectHosts(
  mesh: Mesh,
  hosts: { name: string; password: string }[],
  k: number,
  workers: Worker[],
  dirs: { root: string; stateRoot: string; ownRoot?: boolean },
): Promise<void> {
  const s = servers();
  for (const part of deal(hosts, k)) {
    const w = worker();
    workers.push(w);
    w.send({
      type: 'connect',
      hosts: part,
      broker: { host: '127.0.0.1', port: s.rabbit.amqpsPort, vhost: mesh.vhost, fingerprint: s.rabbit.fingerprint },
      signingKey: b64(mesh.signer.public),
      mesh: mesh.signer.mesh,
      ...dirs,
    });
  }
  await Promise.all(workers.map((w) => w.next('ready', 300_000)));
}
