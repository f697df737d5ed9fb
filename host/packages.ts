// The Debian packages this machine runs, read from dpkg's status file: every
// paragraph whose Status says installed, as name, architecture, version and
// source (the Source field's name, else the package's own). On a machine the
// file is /var/lib/dpkg/status; a host given another dpkg root (the lab's
// nodes, which share one machine) reads that root's.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Package } from '../src/wire/packages.js';

export const statusPath = (dpkgRoot: string) => join(dpkgRoot, 'var/lib/dpkg/status');

/** The installed packages of the status file at PATH; null when there is none (not a Debian machine). */
export function readInstalled(path: string): Package[] | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  const out: Package[] = [];
  for (const para of text.split(/\n\s*\n/)) {
    const field = (name: string) => para.match(new RegExp(`^${name}:[ \\t]*(.*)$`, 'mi'))?.[1]?.trim();
    const name = field('Package');
    const version = field('Version');
    const status = field('Status');
    if (!name || !version || !status || status.split(/\s+/)[2] !== 'installed') continue;
    const source = field('Source')?.split(/\s+/)[0] || name;
    out.push([name, field('Architecture') || 'all', version, source]);
  }
  return out;
}
