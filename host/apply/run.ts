// Running a program: execFile, never a shell, so no declared string is ever
// parsed as shell syntax.
import { execFile } from 'node:child_process';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run and return whatever happened; the caller decides what a non-zero exit means. */
export function run(file: string, args: string[], timeoutMs = 300_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') {
        reject(new Error(`Could not run ${file}: ${err.message}. Install it or put it on PATH.`, { cause: err }));
        return;
      }
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Run and throw a sentence with the program's own complaint on a non-zero exit. */
export async function runOk(file: string, args: string[], what: string, timeoutMs?: number): Promise<string> {
  const r = await run(file, args, timeoutMs);
  if (r.code !== 0) {
    throw new Error(`${what} failed (${file} ${args[0] ?? ''} exited ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
  }
  return r.stdout;
}
