// A lab that is up, as any later command sees it: its state file (lab.json in
// the lab folder) names the namespaces, each machine's holder pid (whose
// network and mount namespaces its commands enter) and its host process.
// `lab up` writes it; `lab scenario`, `lab show` and `lab down` read it, so
// they work from another process than the one that brought the lab up.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, closeSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { procStat, isRunning } from '../host/apply/proc.js';
import { runAny, type Ran } from '../src/sys/proc.js';

export const DIST = fileURLToPath(new URL('..', import.meta.url));
export const NODE = process.execPath;
export const MESH_HOST_JS = join(DIST, 'host/cli.js');
export const PATH_ENV = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export function labDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MESH_LAB_DIR || '/tmp/mesh-lab';
}

export interface MachineState {
  site: string;
  lan: string;
  /** The holder: a sleeping process whose namespaces the machine's commands enter. */
  pid: number;
  pidStart: string;
  /** The first node runs its host as a carried service; the others are started by the lab. */
  first?: boolean;
  host?: { pid: number; start: string };
  enrolled?: boolean;
}

export interface LabState {
  id: string;
  dir: string;
  namespaces: string[];
  hub: string;
  hubPublic: string;
  machines: Record<string, MachineState>;
  /** The first-node bundle's arguments, so running it again changes only what is missing. */
  bundleArgs: string[];
}

/** Knobs every lab host runs with: quick reconcile and reconnect, so scenarios take seconds. */
export const LAB_HOST_ENV: Record<string, string> = {
  MESH_HOST_RECONCILE_SECONDS: '5',
  MESH_HOST_BACKOFF_MAX_SECONDS: '4',
  MESH_HOST_HEARD_SECONDS: '20',
  MESH_HOST_ROOTS: '/srv',
};

export class LabHandle {
  constructor(public state: LabState) {}

  static load(dir = labDir()): LabHandle | null {
    const f = join(dir, 'lab.json');
    if (!existsSync(f)) return null;
    return new LabHandle(JSON.parse(readFileSync(f, 'utf8')) as LabState);
  }

  save(): void {
    mkdirSync(this.state.dir, { recursive: true, mode: 0o755 });
    writeFileSync(join(this.state.dir, 'lab.json'), JSON.stringify(this.state, null, 2) + '\n', { mode: 0o600 });
  }

  get dir(): string {
    return this.state.dir;
  }
  get hub(): string {
    return this.state.hub;
  }
  machineDir(m: string): string {
    return join(this.state.dir, 'm', m);
  }
  hubState(): string {
    return join(this.machineDir(this.hub), 'state');
  }
  hostDir(m: string): string {
    return m === this.hub ? join(this.hubState(), 'host') : join(this.machineDir(m), 'host');
  }
  hostLogPath(m: string): string {
    return m === this.hub ? join(this.hostDir(m), 'services', 'mesh-host.log') : join(this.machineDir(m), 'host.log');
  }
  serviceLogPath(name: string): string {
    return join(this.hostDir(this.hub), 'services', `${name}.log`);
  }
  machines(): string[] {
    return Object.keys(this.state.machines);
  }
  enrolled(): string[] {
    return this.machines().filter((m) => this.state.machines[m]!.enrolled);
  }

  /** Is the machine's holder still the process we started? */
  async alive(m: string): Promise<boolean> {
    const s = this.state.machines[m];
    if (!s) return false;
    return isRunning(s.pid, s.pidStart);
  }

  private enter(m: string, argv: string[]): string[] {
    const s = this.state.machines[m];
    if (!s) throw new Error(`no machine ${m} in lab ${this.state.id}`);
    return ['-t', String(s.pid), '-m', '-n', '--', ...argv];
  }

  /** Run argv inside a machine; resolves whatever the exit code. */
  run(
    m: string,
    argv: string[],
    opts: { input?: string; env?: Record<string, string>; echo?: (line: string) => void } = {},
  ): Promise<Ran> {
    return runAny('nsenter', this.enter(m, argv), {
      input: opts.input,
      env: { ...process.env, ...opts.env },
      onLine: opts.echo,
    });
  }

  async ok(
    m: string,
    argv: string[],
    opts: { input?: string; env?: Record<string, string>; echo?: (line: string) => void } = {},
  ): Promise<string> {
    const r = await this.run(m, argv, opts);
    if (r.code !== 0) throw new Error(`${argv.join(' ')} on ${m} exited ${r.code}: ${(r.stderr || r.stdout).trim()}`);
    return r.stdout;
  }

  /** The operator's `mesh`, on the first node, with its store and home. */
  mesh(args: string[]): Promise<Ran> {
    return this.run(this.hub, [join(this.hubState(), 'bin', 'mesh'), ...args]);
  }

  async meshOk(args: string[]): Promise<string> {
    const r = await this.mesh(args);
    if (r.code !== 0) throw new Error(`mesh ${args.join(' ')} failed: ${(r.stderr || r.stdout).trim()}`);
    return r.stdout;
  }

  /** The first-node bundle on the hub, with the arguments it was first run with. */
  runBundle(echo?: (line: string) => void): Promise<Ran> {
    return this.run(this.hub, [NODE, join(DIST, 'bundle/install.js'), ...this.state.bundleArgs], { echo });
  }

  /** Start a (non-first) machine's mesh-host run in its namespaces, detached, logging to its file. */
  async startHost(m: string): Promise<void> {
    if (m === this.hub) throw new Error("the first node's host is a carried service: re-run the bundle to start it");
    if (await this.hostRunning(m)) return;
    mkdirSync(this.machineDir(m), { recursive: true, mode: 0o755 });
    const fd = openSync(this.hostLogPath(m), 'a', 0o600);
    const env = [
      '-i',
      `PATH=${PATH_ENV}`,
      `MESH_HOST_DIR=${this.hostDir(m)}`,
      ...Object.entries(LAB_HOST_ENV).map(([k, v]) => `${k}=${v}`),
    ];
    // nsenter without --fork execs: the pid we get is the host's own.
    const child = spawn('nsenter', this.enter(m, ['/usr/bin/env', ...env, NODE, MESH_HOST_JS, 'run']), {
      detached: true,
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    await new Promise<void>((ok, fail) => {
      child.once('spawn', ok);
      child.once('error', fail);
    });
    child.unref();
    const st = await procStat(child.pid!);
    this.state.machines[m]!.host = { pid: child.pid!, start: st?.start ?? '' };
    this.save();
  }

  async hostRunning(m: string): Promise<boolean> {
    const h = this.state.machines[m]?.host;
    if (!h) return false;
    return isRunning(h.pid, h.start);
  }

  async stopHost(m: string): Promise<void> {
    if (!(await this.hostRunning(m))) return;
    const h = this.state.machines[m]!.host!;
    process.kill(h.pid, 'SIGTERM');
    for (let i = 0; i < 100 && (await this.hostRunning(m)); i++) await sleep(100);
    if (await this.hostRunning(m)) process.kill(h.pid, 'SIGKILL');
    delete this.state.machines[m]!.host;
    this.save();
  }

  /** A log's length now: pass it to waitLog to see only what comes after. */
  mark(path: string): number {
    return statSync(path, { throwIfNoEntry: false })?.size ?? 0;
  }

  readLog(path: string, from = 0): string {
    if (!existsSync(path)) return '';
    return readFileSync(path).subarray(from).toString('utf8');
  }

  async waitLog(path: string, re: RegExp, from: number, seconds: number, what: string): Promise<RegExpMatchArray> {
    return until(
      () => this.readLog(path, from).match(re) ?? null,
      seconds,
      () => `${what} (waiting for ${re} in ${path}; it said:\n${this.readLog(path, from).slice(-2000)})`,
    );
  }
}

/** Poll `check` until it returns something, or fail after `seconds` with the description. */
export async function until<T>(
  check: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  seconds: number,
  what: string | (() => string),
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${seconds}s: ${typeof what === 'function' ? what() : what}`);
    await sleep(250);
  }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
