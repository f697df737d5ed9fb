// A service where there is no systemd: the host starts argv in its own
// process group (so a restart reaches its children too), with a pid file that
// lets a restarted host find it again instead of starting a second copy.
import { spawn } from 'node:child_process';
import { mkdir, open, readFile, readdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceResource } from '../../src/wire/resources.js';
import type { DriverContext, Observed } from './driver.js';
import { writeAtomic } from '../../src/sys/atomic.js';
import { groupAlive, isRunning, procStat, sleep } from './proc.js';
import { Backoff, type BackoffSettings } from '../../src/sys/backoff.js';

/** What the pid file holds: the process, when it started, and what it was started as. */
interface PidRecord {
  pid: number;
  start: string;
  digest: string;
  /** The argv and directory it was started with, so a supervisor can start it again from this file alone. */
  exec?: string[];
  workdir?: string;
}

// The service sees this and nothing of the host's own environment, which may
// hold store credentials. Secrets reach a service as files, never argv or env.
const SERVICE_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
const STOP_GRACE_MS = 5000;

const dir = (ctx: DriverContext) => join(ctx.stateDir, 'services');
const pidPath = (name: string, ctx: DriverContext) => join(dir(ctx), `${name}.pid`);
// Present while the host itself stops a service (a restart, a removal): a
// death the host is causing is not one the supervisor should undo.
const stoppingPath = (name: string, ctx: DriverContext) => join(dir(ctx), `${name}.stopping`);
const unlinkQuiet = (p: string) =>
  unlink(p).catch((err) => {
    if (err.code !== 'ENOENT') throw err;
  });

async function readRecord(name: string, ctx: DriverContext): Promise<PidRecord | null> {
  try {
    return JSON.parse(await readFile(pidPath(name, ctx), 'utf8')) as PidRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    ctx.log(
      `pid file of service ${name} is unreadable (${(err as Error).message}); treating the service as not running`,
    );
    return null;
  }
}

// A pid from the file counts only if that pid still has the start time we
// recorded: after a reboot or a crash the number may belong to anything.
// (Start time, not /proc/<pid>/cmdline: a service that execs, as
// `sh -c '...; exec daemon'` does, changes its cmdline but not its start time.)
async function running(name: string, ctx: DriverContext): Promise<PidRecord | null> {
  const rec = await readRecord(name, ctx);
  return rec && (await isRunning(rec.pid, rec.start)) ? rec : null;
}

export async function observeProcess(r: ServiceResource, digest: string, ctx: DriverContext): Promise<Observed> {
  const rec = await running(r.name, ctx);
  if (!rec) return 'absent';
  return rec.digest === digest ? 'ok' : 'drift';
}

export async function startProcess(r: ServiceResource, digest: string, ctx: DriverContext): Promise<void> {
  await mkdir(dir(ctx), { recursive: true, mode: 0o700 });
  const log = await open(join(dir(ctx), `${r.name}.log`), 'a', 0o600);
  let child;
  try {
    child = spawn(r.exec[0]!, r.exec.slice(1), {
      detached: true, // setsid: its own session and process group, outliving the host
      stdio: ['ignore', log.fd, log.fd],
      cwd: r.workdir ?? '/',
      env: SERVICE_ENV,
    });
    await new Promise<void>((ok, fail) => {
      child!.once('spawn', ok);
      child!.once('error', fail);
    });
  } catch (err) {
    throw new Error(
      `Service ${r.name} could not start ${r.exec[0]}: ${(err as Error).message}. Check the declared exec path exists and is executable.`,
      { cause: err },
    );
  } finally {
    await log.close();
  }
  child.unref();
  const pid = child.pid!;
  const stat = await procStat(pid);
  // A host that dies between spawn and this write leaves the service running
  // unrecorded; the next apply starts another. The window is a few ms.
  const rec: PidRecord = {
    pid,
    start: stat?.start ?? '',
    digest,
    exec: r.exec,
    ...(r.workdir ? { workdir: r.workdir } : {}),
  };
  await writeAtomic(pidPath(r.name, ctx), JSON.stringify(rec), 0o600);
  await unlinkQuiet(stoppingPath(r.name, ctx));
  ctx.log(`service ${r.name} started, pid ${pid}`);
}

/** TERM the whole process group, KILL it after 5 s. Returns when nothing of it is left. */
export async function stopProcess(name: string, ctx: DriverContext): Promise<void> {
  const rec = await running(name, ctx);
  if (!rec) return;
  await writeAtomic(stoppingPath(name, ctx), '', 0o600);
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-rec.pid, sig);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + STOP_GRACE_MS;
  while (Date.now() < deadline) {
    if (!(await groupAlive(rec.pid))) return;
    await sleep(50);
  }
  ctx.log(`service ${name} ignored SIGTERM for ${STOP_GRACE_MS / 1000} s; killing its process group`);
  signal('SIGKILL');
  for (let i = 0; i < 40 && (await groupAlive(rec.pid)); i++) await sleep(50);
}

export async function removeProcess(name: string, ctx: DriverContext): Promise<void> {
  await stopProcess(name, ctx);
  await unlinkQuiet(pidPath(name, ctx));
  await unlinkQuiet(stoppingPath(name, ctx));
}

export interface Restarted {
  name: string;
  attempt: number;
  nextWaitMs: number;
}

export interface SuperviseOptions {
  log(line: string): void;
  /** Told after each restart, so the host reports it. */
  restarted(r: Restarted): void;
  /** How often the pid files are looked at. */
  everyMs?: number;
  backoff?: BackoffSettings;
  /** Told after every look at the pid files (tests count looks instead of waiting). */
  looked?(): void;
}

/**
 * Where there is no systemd: a service the host raised (carried or declared)
 * whose process is gone is started again, from its pid file, with backoff
 * (2 s doubling to 2 min; back to 2 s once it has run 30 s). A service the
 * engine removed has no pid file and is left alone. A record must be seen
 * dead at two looks in a row, unchanged: between the engine's stop and start
 * of a restart it is dead for an instant, and that is not a death.
 */
export function superviseServices(stateDir: string, opts: SuperviseOptions): { stop(): void } {
  const every = opts.everyMs ?? 2000;
  const ctx = servicesOnly(stateDir, opts.log);
  const state = new Map<string, Watched>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const look = async () => {
    const names = (await readdir(dir(ctx)).catch(() => [] as string[]))
      .filter((f) => f.endsWith('.pid'))
      .map((f) => f.slice(0, -4));
    for (const name of names) await lookAt(name, ctx, state, opts);
  };
  const loop = () => {
    if (stopped) return;
    void look()
      .catch((err) => opts.log(`supervising services: ${(err as Error).message}`))
      .finally(() => {
        opts.looked?.();
        if (!stopped) timer = setTimeout(loop, every);
      });
  };
  timer = setTimeout(loop, every);
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** What the supervisor keeps of a service between looks. */
interface Watched {
  backoff: Backoff;
  attempts: number;
  up: boolean;
  deadSeen?: string;
  notBefore: number;
}

/** A driver context for services under STATEDIR and nothing else. */
function servicesOnly(stateDir: string, log: (line: string) => void): DriverContext {
  return {
    stateDir,
    roots: [],
    openSealed: () => {
      throw new Error('none');
    },
    overlayKeyPath: '',
    // Services only: no interface or firewall is applied here.
    wgDir: '',
    firewall: false,
    changed: new Set(),
    log,
  };
}

const isStopping = (name: string, ctx: DriverContext) =>
  stat(stoppingPath(name, ctx)).then(
    () => true,
    () => false,
  );

/** One look at service NAME's pid file: a record seen dead twice, unchanged, is started again when its wait is over. */
async function lookAt(name: string, ctx: DriverContext, state: Map<string, Watched>, opts: SuperviseOptions) {
  const rec = await readRecord(name, ctx);
  if (!rec?.exec?.length) return;
  if (await isStopping(name, ctx)) return; // the host is stopping it // written before records kept the argv: the 5-minute reconcile puts it back
  let s = state.get(name);
  if (!s) {
    s = { backoff: new Backoff(opts.backoff), attempts: 0, up: false, notBefore: 0 };
    state.set(name, s);
  }
  const key = `${rec.pid}:${rec.start}`;
  if (await isRunning(rec.pid, rec.start)) {
    // Up since we first saw it (or started it): how long it held decides the next wait.
    if (!s.up) {
      s.up = true;
      s.backoff.connected(Date.now());
    }
    s.deadSeen = undefined;
    return;
  }
  if (s.deadSeen !== key) {
    s.deadSeen = key;
    return;
  }
  if (Date.now() < s.notBefore) return;
  // Still the same dead record just before starting: nobody else started it meanwhile.
  const again = await readRecord(name, ctx);
  if (!again || `${again.pid}:${again.start}` !== key || (await isStopping(name, ctx))) {
    s.deadSeen = undefined;
    return;
  }
  await startAgain(name, rec, s, ctx, opts);
}

/** Dead service NAME started again from its record REC, its backoff moved on, the host told. */
async function startAgain(name: string, rec: PidRecord, s: Watched, ctx: DriverContext, opts: SuperviseOptions) {
  if (s.up) {
    s.up = false;
    s.backoff.disconnected(Date.now());
  }
  const wait = s.backoff.next();
  s.attempts += 1;
  s.notBefore = Date.now() + wait;
  try {
    await startProcess(
      {
        kind: 'service',
        id: `service:${name}`,
        name,
        exec: rec.exec!,
        ...(rec.workdir ? { workdir: rec.workdir } : {}),
      },
      rec.digest,
      ctx,
    );
    s.deadSeen = undefined;
    s.up = true;
    s.backoff.connected(Date.now());
    opts.log(
      `service ${name} had died; started it again (attempt ${s.attempts}; the next in no less than ${Math.round(s.backoff.peek() / 1000)} s)`,
    );
    opts.restarted({ name, attempt: s.attempts, nextWaitMs: s.backoff.peek() });
  } catch (err) {
    opts.log(
      `service ${name} had died and could not be started again: ${(err as Error).message}; trying again in ${Math.round(wait / 1000)} s`,
    );
  }
}
