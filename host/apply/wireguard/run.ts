// Running the tools the overlay needs (wg, wg-quick, ip, iptables). Always
// argv, never a shell string: interface names and keys are data.
import { execFile } from 'node:child_process';

export interface RunResult { code: number; stdout: string; stderr: string }

/** Run argv; resolve with the exit code whatever it is. Rejects only when the program cannot be started. */
export function runAny(cmd: string, args: string[], input?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { maxBuffer: 16 << 20, env: quietEnv() }, (err, stdout, stderr) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') {
        reject(new Error(`${cmd} could not be started (${(err as NodeJS.ErrnoException).code}): is it installed?`, { cause: err }));
        return;
      }
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
    // A program that exits without reading its stdin must not crash us with EPIPE.
    child.stdin?.on('error', () => {});
    if (input !== undefined) child.stdin?.end(input);
  });
}

/** Run argv; a non-zero exit becomes an Error naming the command and its stderr. */
export async function run(cmd: string, args: string[], input?: string): Promise<string> {
  const r = await runAny(cmd, args, input);
  if (r.code !== 0) throw commandError(cmd, args, r);
  return r.stdout;
}

export function commandError(cmd: string, args: string[], r: RunResult): Error {
  const said = (r.stderr.trim() || r.stdout.trim() || '(nothing on stderr)').split('\n').slice(-6).join(' | ');
  return new Error(`${cmd} ${args.join(' ')} exited ${r.code}: ${said}`);
}

/**
 * wireguard-go keeps stdout/stderr open when LOG_LEVEL is set, and a
 * daemonised child holding our pipes would make execFile wait forever.
 */
function quietEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.LOG_LEVEL;
  return env;
}
