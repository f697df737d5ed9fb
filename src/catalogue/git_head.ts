// Where a source's ref points now, read with `git ls-remote`: the control
// plane looks at the repository, it runs nothing on any machine.
import { execFile } from 'node:child_process';
import { COMMIT } from '../wire/build.js';

function lsRemote(url: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    // `--` so a URL is never read as an option; ext:: would run a command.
    execFile('git', ['-c', 'protocol.ext.allow=never', 'ls-remote', '--', url], { timeout: timeoutMs, maxBuffer: 16 << 20, env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } },
      (err, stdout, stderr) => (err ? reject(new Error(`git ls-remote ${url} failed: ${String(stderr || err.message).trim().split('\n').at(-1)}`)) : resolve(String(stdout))));
  });
}

/** The commit REF names in the listing: HEAD, a branch, a tag (peeled), or a commit id itself. */
export function pickHead(listing: string, ref: string): string | undefined {
  const refs = new Map<string, string>();
  for (const line of listing.split('\n')) {
    const [sha, name] = line.split('\t');
    if (sha && name) refs.set(name, sha);
  }
  const found = ref === 'HEAD' ? refs.get('HEAD')
    : refs.get(`refs/heads/${ref}`) ?? refs.get(`refs/tags/${ref}^{}`) ?? refs.get(`refs/tags/${ref}`) ?? refs.get(ref);
  if (found) return found;
  return COMMIT.test(ref) ? ref : undefined;
}

export async function sourceHead(url: string, ref: string, timeoutMs = 60_000): Promise<string> {
  const head = pickHead(await lsRemote(url, timeoutMs), ref);
  if (!head) throw new Error(`${url} has no branch or tag ${ref}`);
  return head;
}
