// The machine's own config for the peers, as it was: every path, size and
// mtime under the directories Puppet, Ansible and sshd would use by default.
// The bench compares it before and after, so a peer that wrote outside the
// run's temp dir is an error, never a silent change to the machine.
import { readdirSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { homedir } from 'node:os';

const DIRS = [
  '/etc/puppet',
  '/var/lib/puppet',
  '/var/cache/puppet',
  '/var/log/puppet',
  '/var/lib/puppetserver',
  '/var/log/puppetserver',
  '/etc/puppetdb',
  '/var/lib/puppetdb',
  '/etc/ssh',
  '/etc/ansible',
  join(homedir(), '.ssh'),
  join(homedir(), '.ansible'),
  join(homedir(), '.puppet'),
  join(homedir(), '.puppetlabs'),
];

export function footprint(): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (p: string) => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    out.set(p, `${st.isDirectory() ? 'dir' : st.size} ${st.mtimeMs}`);
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
  };
  for (const d of DIRS) walk(d);
  return out;
}

/** What changed between two footprints, as lines. */
export function changes(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [p, v] of after) if (before.get(p) !== v) out.push(`${before.has(p) ? 'changed' : 'made'} ${p}`);
  for (const p of before.keys()) if (!after.has(p)) out.push(`removed ${p}`);
  return out;
}
