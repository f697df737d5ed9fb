// The one way a program is run: argv, never a shell, so no name, key or
// declared string is ever parsed as shell syntax. Two failures a person must
// tell apart: the program is not there ("could not start X (ENOENT): is it
// installed?") and the program ran and refused ("X exited N: <its stderr>").
import { spawn } from 'node:child_process';

export interface RunOptions {
  /** Written to the program's stdin, then stdin is closed; without it stdin is /dev/null. */
  input?: string | Buffer;
  /** Killed (SIGKILL) after this long, and the run rejects saying so. */
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Ended (SIGTERM) when this aborts; the run rejects with RunAbandoned. */
  signal?: AbortSignal;
  /** Each line of stdout and stderr as it comes. Output is still kept, up to 64 MiB (a build log can be larger: its lines all reach onLine). */
  onLine?: (line: string) => void;
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** The program could not be started, timed out or was abandoned: there is no exit code to judge. */
export class RunError extends Error {}
export class RunAbandoned extends RunError {}

// Beyond this, a program's output is not something we parse: refused, not truncated.
const MAX_OUTPUT = 64 << 20;

/** The last lines something said, each cut short: what an error or a build answer quotes. */
export class LastLines {
  readonly lines: string[] = [];
  constructor(private readonly max = 60) {}
  push(line: string): void {
    this.lines.push(line.length > 400 ? line.slice(0, 400) + '…' : line);
    if (this.lines.length > this.max) this.lines.shift();
  }
  text(): string {
    return this.lines.join('\n');
  }
}

/** Run argv and resolve with the exit code whatever it is; rejects (RunError) only when there is none. */
export function runAny(cmd: string, args: string[], opts: RunOptions = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new RunAbandoned(`${cmd} was abandoned before it started`));
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let failure: RunError | undefined;
    const stop = (why: RunError, signal: NodeJS.Signals) => {
      failure ??= why;
      child.kill(signal);
    };
    // Lines split per stream, so a line is never half stdout and half stderr; a last line without newline is given at close.
    const partial = { out: '', err: '' };
    const collect = (into: Buffer[], which: 'out' | 'err') => (d: Buffer) => {
      size += d.length;
      if (!opts.onLine) {
        if (size > MAX_OUTPUT)
          stop(new RunError(`${cmd} wrote more than ${MAX_OUTPUT >> 20} MiB of output`), 'SIGKILL');
        else into.push(d);
        return;
      }
      if (size <= MAX_OUTPUT) into.push(d);
      const parts = (partial[which] + d.toString('utf8')).split(/\r?\n/);
      partial[which] = parts.pop()!;
      for (const p of parts) opts.onLine(p);
    };
    child.stdout!.on('data', collect(out, 'out'));
    child.stderr!.on('data', collect(err, 'err'));
    const timer =
      opts.timeoutMs === undefined
        ? undefined
        : setTimeout(
            () =>
              stop(
                new RunError(
                  `${cmd} ${args.join(' ')} did not finish within ${opts.timeoutMs! / 1000}s and was killed`,
                ),
                'SIGKILL',
              ),
            opts.timeoutMs,
          );
    const onAbort = () => stop(new RunAbandoned(`${cmd} was abandoned`), 'SIGTERM');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => {
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      done();
      reject(
        new RunError(`could not start ${cmd} (${e.code ?? e.message}): is it installed and on PATH?`, { cause: e }),
      );
    });
    child.on('close', (code, signal) => {
      done();
      for (const rest of [partial.out, partial.err]) if (rest && opts.onLine) opts.onLine(rest);
      if (failure) return reject(failure);
      resolve({
        code: code ?? (signal ? 128 : 1),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    if (opts.input !== undefined) {
      // A program that exits without reading its stdin must not crash us with EPIPE: its exit code says why.
      child.stdin!.on('error', () => {});
      child.stdin!.end(opts.input);
    }
  });
}

/** Run argv; a non-zero exit rejects with "CMD ARGS exited N: <the end of what it said>". */
export async function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  const r = await runAny(cmd, args, opts);
  if (r.code !== 0) throw exitError(cmd, args, r);
  return r.stdout;
}

export function exitError(cmd: string, args: string[], r: Ran): Error {
  const said = (r.stderr.trim() || r.stdout.trim() || '(nothing on stderr)').split('\n').slice(-6).join(' | ');
  return new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${said}`);
}
