// A service where there is no systemd: the host starts argv in its own
// process group (so a restart reaches its children too), with a pid file that
// lets a restarted host find it again instead of starting a second copy.
import { spawn } from 'node:child_process';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServiceResource } from '../../src/wire/resources.js';
import type { DriverContext, Observed } from './driver.js';
import { writeAtomic } from '../../src/sys/atomic.js';
import { groupAlive, isRunning, procStat, sleep } from './proc.js';

/** What the pid file holds: the process, when it started, and what it was started as. */
interface PidRecord {
  pid: number;
  start: string;
  digest: string;
}

// The service sees this and nothing of the host's own environment, which may
// hold store credentials. Secrets reach a service as files, never argv or env.
const SERVICE_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };
const STOP_GRACE_MS = 5000;

const dir = (ctx: DriverContext) => join(ctx.stateDir, 'services');
const pidPath = (name: string, ctx: DriverContext) => join(dir(ctx), `${name}.pid`);

async function readRecord(name: string, ctx: DriverContext): Promise<PidRecord | null> {
  try {
    return JSON.parse(await readFile(pidPath(name, ctx), 'utf8')) as PidRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    ctx.log(`pid file of service ${name} is unreadable (${(err as Error).message}); treating the service as not running`);
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
    throw new Error(`Service ${r.name} could not start ${r.exec[0]}: ${(err as Error).message}. Check the declared exec path exists and is executable.`, { cause: err });
  } finally {
    await log.close();
  }
  child.unref();
  const pid = child.pid!;
  const stat = await procStat(pid);
  // A host that dies between spawn and this write leaves the service running
  // unrecorded; the next apply starts another. The window is a few ms.
  await writeAtomic(pidPath(r.name, ctx), JSON.stringify({ pid, start: stat?.start ?? '', digest } satisfies PidRecord), 0o600);
  ctx.log(`service ${r.name} started, pid ${pid}`);
}

/** TERM the whole process group, KILL it after 5 s. Returns when nothing of it is left. */
export async function stopProcess(name: string, ctx: DriverContext): Promise<void> {
  const rec = await running(name, ctx);
  if (!rec) return;
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
  await unlink(pidPath(name, ctx)).catch((err) => {
    if (err.code !== 'ENOENT') throw err;
  });
}
