// What the peers bench's helpers share: a process whose output goes to its own
// log file (kept with the run's peer logs), waited for with its exit code, and
// the free port and tree helpers.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, readFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname } from 'node:path';

export interface Ran {
  code: number | null;
  signal: string | null;
  seconds: number;
  log: string;
}

const started = new Set<ChildProcess>();

/** CMD ARGS with stdout and stderr into LOG; resolves when it exits. */
export function run(
  cmd: string,
  args: string[],
  log: string,
  opts: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): { child: ChildProcess; done: Promise<Ran> } {
  mkdirSync(dirname(log), { recursive: true });
  const fd = openSync(log, 'a');
  const t0 = performance.now();
  const child = spawn(cmd, args, { stdio: ['ignore', fd, fd], env: opts.env ?? process.env, cwd: opts.cwd });
  closeSync(fd);
  started.add(child);
  const done = new Promise<Ran>((resolve, reject) => {
    child.once('error', (e) => {
      started.delete(child);
      reject(new Error(`${cmd} could not start (${e.message}): install it with bash bundle/ensure-packages.sh peers.`));
    });
    child.once('exit', (code, signal) => {
      started.delete(child);
      resolve({ code, signal, seconds: (performance.now() - t0) / 1000, log });
    });
  });
  return { child, done };
}

/** The tail of a log, for an error message. */
export function tail(log: string, lines = 15): string {
  try {
    return readFileSync(log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Every process these helpers started and that still runs: ended by its own pid, then killed. */
export async function endStarted(): Promise<void> {
  const left = [...started].filter((c) => c.exitCode === null && c.signalCode === null);
  for (const c of left) c.kill('SIGTERM');
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && left.some((c) => c.exitCode === null && c.signalCode === null))
    await new Promise((r) => setTimeout(r, 200));
  for (const c of left) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** Resident and peak MB of a process from /proc. */
export function rss(pid: number): { rssMB: number; peakMB: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
  return { rssMB: +(kb('VmRSS') / 1024).toFixed(1), peakMB: +(kb('VmHWM') / 1024).toFixed(1) };
}

/** Output of a command, for versions. */
export async function output(cmd: string, args: string[], log: string): Promise<string> {
  const r = await run(cmd, args, log).done;
  const text = tail(log, 200);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}): ${text}`);
  return text;
}
