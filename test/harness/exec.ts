import { execFile, type ExecFileOptions } from 'node:child_process';

/** execFile as a promise; the error names the command and carries its stderr. */
export function run(cmd: string, args: string[], opts: ExecFileOptions & { input?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { maxBuffer: 64 << 20, ...opts }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`${cmd} ${args.join(' ')} failed: ${String(stderr || err.message).trim()}`, { cause: err }));
      } else resolve(String(stdout));
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}
