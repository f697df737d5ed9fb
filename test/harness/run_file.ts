// One suite file run in a process of its own, and its outcome counted: the
// one way test/run.ts (and test/unit/hook_errors, which checks the counting)
// runs a file. uvu prints "Total: N / Passed: N / Skipped: N" per process.
import { spawn } from 'node:child_process';

export interface Outcome {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  code: number | null;
  out: string;
  seconds: number;
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  /** Killed (and red) after this long. */
  limitMs: number;
  /** How the file is named in the timeout line. */
  label: string;
  /** A bench asserts nothing (speed is never a test): it passes by measuring, judged by its exit code. */
  bench?: boolean;
}

/** What a finished file's output and exit code count as. */
export function count(plain: string, code: number | null): Pick<Outcome, 'passed' | 'failed' | 'skipped'> {
  const num = (re: RegExp) => Number(re.exec(plain)?.[1] ?? 0);
  const total = num(/Total:\s+(\d+)/);
  const passed = num(/Passed:\s+(\d+)/);
  const skipped = num(/Skipped:\s+(\d+)/);
  let failed = Math.max(0, total - passed); // uvu's Total leaves skipped tests out
  if (code !== 0 && failed === 0) failed = 1; // a crash, a hang or a failed hook (test/harness/suite.ts) is a failure, never a pass
  if (total === 0 && code === 0) failed = 1; // a file that ran no test is a defect
  return { passed, failed, skipped };
}

export function runFile(file: string, o: RunOptions): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, [file], { env: o.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const timer = setTimeout(() => {
      out += `\n[run] ${o.label} exceeded ${o.limitMs / 1000}s and was killed\n`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, o.limitMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
      const seconds = (Date.now() - started) / 1000;
      if (o.bench)
        resolve({
          file,
          passed: code === 0 ? 1 : 0,
          failed: code === 0 ? 0 : 1,
          skipped: 0,
          code,
          out: plain,
          seconds,
        });
      else resolve({ file, ...count(plain, code), code, out: plain, seconds });
    });
  });
}
