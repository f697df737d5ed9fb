// Run a program for a build: arguments as a list (never a shell string),
// output read line by line as it comes, the last lines kept for the answer,
// and ended at once when the build is abandoned (the broker link went).
import { spawn } from 'node:child_process';

export interface Ran { code: number | null; tail: string[] }

export class Tail {
  readonly lines: string[] = [];
  constructor(private readonly max = 60) {}
  push(line: string): void {
    this.lines.push(line.length > 400 ? line.slice(0, 400) + '…' : line);
    if (this.lines.length > this.max) this.lines.shift();
  }
  text(): string { return this.lines.join('\n'); }
}

export function runLines(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; signal?: AbortSignal; onLine?: (line: string) => void; tail: Tail }): Promise<number | null> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new Error('abandoned'));
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const onAbort = () => child.kill('SIGTERM');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const feed = () => {
      let rest = '';
      return (d: Buffer) => {
        rest += d.toString('utf8');
        const parts = rest.split(/\r?\n/);
        rest = parts.pop()!;
        for (const p of parts) { opts.tail.push(p); opts.onLine?.(p); }
      };
    };
    child.stdout.on('data', feed());
    child.stderr.on('data', feed());
    child.on('error', (err) => { opts.signal?.removeEventListener('abort', onAbort); reject(new Error(`${cmd} could not be started (${err.message}): is it installed?`)); });
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) reject(new Error('abandoned'));
      else resolve(code);
    });
  });
}
