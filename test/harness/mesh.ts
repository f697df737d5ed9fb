// A whole mesh for one suite: a fresh database, a fresh broker vhost with its
// own account prefix, a control-plane home (broker.json, signing key), real
// `mesh serve` and `mesh-host` processes, all stopped at the end.
import { mkdtempSync, rmSync, readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { freshStore, type Store } from './store.js';
import { servers, type Servers } from './servers.js';
import { writeBroker, ensureSigner, type BrokerConfig, type Signer } from '../../src/home/home.js';
import { runAny } from '../../src/sys/proc.js';
import { ManagementApi } from '../../src/broker/management.js';
import { leave, suiteDir } from './leftovers.js';
import type { RabbitCluster } from './rabbit_cluster.js';

export const MESH = fileURLToPath(new URL('../../src/cli/mesh.js', import.meta.url));
export const MESH_HOST = fileURLToPath(new URL('../../host/cli.js', import.meta.url));

export interface Proc {
  child: ChildProcess;
  /** Everything it said so far. */
  output(): string;
  /** Resolves when its output matches, or rejects after the timeout with what it said. */
  waitFor(re: RegExp, timeoutMs?: number, from?: number): Promise<RegExpMatchArray>;
  /** Its exit code once it has exited, or a rejection after the timeout naming it and what it said. */
  exited(timeoutMs?: number): Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** PID's descendants, read while PID lives: once it dies they are init's, and no longer found from it. */
function descendants(pid: number): number[] {
  const kids = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .map(Number);
  return kids.flatMap((k) => [k, ...descendants(k)]);
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/**
 * `input`, when given, is written to its stdin, which is then closed (a token: never on its command line).
 * `detached`: in a process group of its own, so a test can kill it and everything it started at once.
 */
export function spawnProc(cmd: string, args: string[], env: NodeJS.ProcessEnv, input?: string, detached = false): Proc {
  const child = spawn(cmd, args, { env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], detached });
  if (input !== undefined) child.stdin!.end(input);
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  child.on('exit', () => {
    for (const l of listeners) l();
  });
  return {
    child,
    output: () => out,
    waitFor(re, timeoutMs = 20_000, from = 0) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const m = out.slice(from).match(re);
          if (m) {
            listeners.delete(check);
            clearTimeout(t);
            resolve(m);
            return true;
          }
          if (child.exitCode !== null || child.signalCode !== null) {
            listeners.delete(check);
            clearTimeout(t);
            reject(new Error(`process exited (${child.exitCode ?? child.signalCode}) before ${re}; it said:\n${out}`));
            return true;
          }
          return false;
        };
        const t = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`timed out waiting for ${re}; it said:\n${out}`));
        }, timeoutMs);
        if (!check()) listeners.add(check);
      });
    },
    exited(timeoutMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => {
          child.off('exit', done);
          reject(
            new Error(
              `timed out after ${timeoutMs / 1000} s waiting for ${args
                .slice(0, 2)
                .map((a) => a.split('/').at(-1))
                .join(' ')} to exit; it said:\n${out}`,
            ),
          );
        }, timeoutMs);
        const done = (code: number | null) => {
          clearTimeout(t);
          resolve(code);
        };
        child.once('exit', done);
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const done = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      // What it started goes too: an orphan holding the pipes of its output keeps the test's process alive.
      const t = setTimeout(() => {
        for (const pid of [child.pid!, ...descendants(child.pid!)]) kill(pid);
      }, 10_000);
      await done;
      clearTimeout(t);
    },
  };
}

/** PROC stopped (SIGSTOP) while FN runs, and let go on (SIGCONT) however FN ends: a serve held, so what is sent meanwhile waits in its queue. */
export async function held<T>(proc: Proc, fn: () => Promise<T>): Promise<T> {
  process.kill(proc.child.pid!, 'SIGSTOP');
  try {
    return await fn();
  } finally {
    process.kill(proc.child.pid!, 'SIGCONT');
  }
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Host {
  name: string;
  dir: string;
  env: NodeJS.ProcessEnv;
  /** `mesh-host enrol` with the token on its stdin, as an operator gives it. */
  enrol(token: string, extra?: string[]): Promise<CliResult>;
  run(): Proc;
}

export interface Mesh {
  store: Store;
  vhost: string;
  prefix: string;
  home: string;
  env: NodeJS.ProcessEnv;
  broker: BrokerConfig;
  signer: Signer;
  cli(args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult>;
  serve(): Promise<Proc>;
  /** Issue a token and return it. */
  token(name: string, extra?: string[]): Promise<string>;
  host(name: string, env?: NodeJS.ProcessEnv): Host;
  /** Issue, enrol and start a host; resolves once it is connected. */
  joined(name: string, env?: NodeJS.ProcessEnv, issueArgs?: string[]): Promise<{ host: Host; proc: Proc }>;
  mgmt(method: string, path: string, body?: unknown): Promise<Response>;
  stop(): Promise<void>;
}

/** What serve says when its start's re-declare of the nodes owed is done: a test's serve() waits for it, as a bench's does. */
export const START_REDECLARED = /serve: (re-declaring|no node's composition changed)[^\n]*since their last declaration/;

/** A CLI run to its end; `input` is written to its stdin (a token, a builder's line: never on its command line). */
export function runCli(
  file: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  input?: string,
  timeoutMs?: number,
): Promise<CliResult> {
  return runAny(process.execPath, [file, ...args], { env, input, timeoutMs });
}

/**
 * How long a test's `mesh-host enrol` may take: seconds in every test, but an
 * enrolment that waits for ever (a request nobody takes) is killed and named
 * well inside a suite's time limit, rather than hanging the file until it.
 */
const ENROL_DEADLINE_MS = 90_000;

/** The run's one broker, or a suite's own cluster (test/harness/rabbit_cluster.ts): what freshMesh needs of either. */
function brokerOf(s: Servers, cluster?: RabbitCluster) {
  if (!cluster)
    return {
      admin: s.rabbit.admin,
      mgmtPorts: [s.rabbit.mgmtPort],
      amqpPorts: [s.rabbit.amqpPort],
      amqps: s.rabbit.amqpsPort,
      fingerprint: s.rabbit.fingerprint,
    };
  return {
    admin: cluster.admin,
    mgmtPorts: cluster.nodes.map((n) => n.mgmtPort),
    amqpPorts: cluster.nodes.map((n) => n.amqpPort),
    amqps: cluster.nodes[0]!.amqpsPort,
    fingerprint: cluster.nodes[0]!.fingerprint,
  };
}

export async function freshMesh(
  opts: {
    hostEnv?: NodeJS.ProcessEnv;
    servers?: Servers;
    store?: Store;
    serveEnv?: NodeJS.ProcessEnv;
    cluster?: RabbitCluster;
  } = {},
): Promise<Mesh> {
  const s = opts.servers ?? servers();
  const b = brokerOf(s, opts.cluster);
  // A suite may bring a store of its own (a primary and its standby, test/harness/replicated.ts).
  const store = opts.store ?? (await freshStore(s));
  const id = randomBytes(4).toString('hex');
  const vhost = `v-${id}`;
  const prefix = `${id}.`;
  const mgmtUrls = b.mgmtPorts.map((p) => `http://127.0.0.1:${p}`);
  const api = new ManagementApi({ url: mgmtUrls, user: b.admin.user, password: b.admin.password });
  const mgmt = (method: string, path: string, body?: unknown) => api.raw(method, path, body);
  if (!opts.cluster) leave({ kind: 'vhost', name: vhost, prefix, mgmtPort: s.rabbit.mgmtPort });
  await api.putVhost(vhost);
  await api.putPermissions(vhost, b.admin.user, { configure: '.*', write: '.*', read: '.*' });
  const home = mkdtempSync(join(tmpdir(), 'mesh-home-'));
  // A cluster: every node's AMQP and management API, in turn (serve's list of brokers).
  const amqpList = b.amqpPorts.map((port) => ({ host: '127.0.0.1', port }));
  const broker: BrokerConfig = {
    amqp: opts.cluster ? amqpList : amqpList[0]!,
    vhost,
    user: b.admin.user,
    password: b.admin.password,
    management: opts.cluster ? mgmtUrls : mgmtUrls[0]!,
    public: `127.0.0.1:${b.amqps}`,
    fingerprint: b.fingerprint,
    accountPrefix: prefix,
  };
  // Metrics on a free loopback port: suites run side by side, and each serve needs its own.
  const env: NodeJS.ProcessEnv = { ...process.env, ...store.env, MESH_HOME: home, MESH_SERVE_METRICS: '127.0.0.1:0' };
  await writeBroker(broker, env);
  const signer = await ensureSigner(env);
  const procs: Proc[] = [];
  const dirs: string[] = [home];
  const cli = (args: string[], e = env) => runCli(MESH, args, e);
  const token = async (name: string, extra: string[] = []) => {
    const r = await cli(['token', 'issue', name, '--json', ...extra]);
    if (r.code !== 0) throw new Error(`token issue failed: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { token: string }).token;
  };
  const host = (name: string, extraEnv: NodeJS.ProcessEnv = {}): Host => {
    const dir = mkdtempSync(join(tmpdir(), `mesh-host-${name}-`));
    dirs.push(dir);
    const henv = { ...process.env, MESH_HOST_DIR: dir, ...opts.hostEnv, ...extraEnv };
    return {
      name,
      dir,
      env: henv,
      enrol: (t, extra = []) => runCli(MESH_HOST, ['enrol', ...extra], henv, t, ENROL_DEADLINE_MS),
      run: () => {
        const p = spawnProc(process.execPath, [MESH_HOST, 'run'], henv);
        procs.push(p);
        return p;
      },
    };
  };
  const mesh: Mesh = {
    store,
    vhost,
    prefix,
    home,
    env,
    broker,
    signer,
    cli,
    token,
    host,
    mgmt,
    async serve() {
      const p = spawnProc(process.execPath, [MESH, 'serve'], { ...env, ...opts.serveEnv });
      procs.push(p);
      await p.waitFor(/consuming mesh\.control/);
      await p.waitFor(START_REDECLARED, 120_000);
      return p;
    },
    async joined(name, extraEnv = {}, issueArgs = []) {
      const h = host(name, extraEnv);
      const r = await h.enrol(await token(name, issueArgs));
      if (r.code !== 0) throw new Error(`enrol ${name} failed: ${r.stderr}`);
      const proc = h.run();
      await proc.waitFor(/connected to /);
      return { host: h, proc };
    },
    async stop() {
      await Promise.allSettled(procs.map((p) => p.stop()));
      // A declared service outlives its host by design; the suite's do not outlive the suite.
      for (const d of dirs) stopServices(join(d, 'services'));
      if (!suiteDir() && !opts.cluster) await deleteVhost(s.rabbit.mgmtPort, s.rabbit.admin, vhost, prefix);
      await store.drop();
      // Under the run, these are inside the suite's own dir: removed with it when the suite passed.
      if (!suiteDir() && !process.env.MESH_TEST_KEEP) for (const d of dirs) rmSync(d, { recursive: true, force: true });
    },
  };
  return mesh;
}

/** A mesh's vhost and the broker accounts of its prefix. */
export async function deleteVhost(
  mgmtPort: number,
  admin: { user: string; password: string },
  vhost: string,
  prefix: string,
): Promise<void> {
  const api = new ManagementApi({ url: `http://127.0.0.1:${mgmtPort}`, user: admin.user, password: admin.password });
  await api.deleteVhost(vhost);
  const users = await api.users();
  await Promise.all(users.filter((u) => u.name.startsWith(prefix)).map((u) => api.deleteUser(u.name)));
}

function stopServices(dir: string): void {
  if (!existsSync(dir)) return;
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.pid'))) {
    try {
      const { pid } = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { pid: number };
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone already */
    }
  }
}
