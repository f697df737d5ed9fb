// Where a source's ref points now, read with `git ls-remote`: the control
// plane looks at the repository, it runs nothing on any machine.
import { run } from '../sys/proc.js';
import { COMMIT } from '../wire/build.js';
import { refuse } from '../sys/errors.js';

function lsRemote(url: string, timeoutMs: number): Promise<string> {
  // `--` so a URL is never read as an option; ext:: would run a command.
  return run('git', ['-c', 'protocol.ext.allow=never', 'ls-remote', '--', url], {
    timeoutMs,
    env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
  });
}

/** The commit REF names in the listing: HEAD, a branch, a tag (peeled), or a commit id itself. */
export function pickHead(listing: string, ref: string): string | undefined {
  const refs = new Map<string, string>();
  for (const line of listing.split('\n')) {
    const [sha, name] = line.split('\t');
    if (sha && name) refs.set(name, sha);
  }
  const found =
    ref === 'HEAD'
      ? refs.get('HEAD')
      : (refs.get(`refs/heads/${ref}`) ??
        refs.get(`refs/tags/${ref}^{}`) ??
        refs.get(`refs/tags/${ref}`) ??
        refs.get(ref));
  if (found) return found;
  return COMMIT.test(ref) ? ref : undefined;
}

export async function sourceHead(url: string, ref: string, timeoutMs = 60_000): Promise<string> {
  const head = pickHead(await lsRemote(url, timeoutMs), ref);
  if (!head) throw refuse('MSHP7', `${url} has no branch or tag ${ref}`);
  return head;
}
