// The package root (V2): the agent versions this host was upgraded to, each
// unpacked in a folder of its own, and which one runs.
//   MESH_HOST_DIR/agent/versions/VERSION/   a package, unpacked (dpkg-deb -x)
//   MESH_HOST_DIR/agent/current             a symlink to the version that runs;
//                                           absent: the agent the machine was
//                                           installed with runs
//   MESH_HOST_DIR/agent/pending.json        an upgrade not yet proven: the
//                                           version, the one before it, a
//                                           deadline and the starts so far
//   MESH_HOST_DIR/agent/failed.json         the last version that did not come
//                                           up here, never tried again
// The guard (guard below) runs before every start of the agent, as the unit's
// ExecStartPre and in `mesh-host supervise`: a pending upgrade started too
// often, or past its deadline, is switched back to the version before it by
// the machine itself, with no word from the mesh (which may be what the new
// agent cannot reach).
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { writeAtomic } from '../../src/sys/atomic.js';

/** Starts a pending upgrade may take before it is rolled back (a new agent that exits at once). */
export const MAX_STARTS = 3;

export interface Pending {
  version: string;
  sha256: string;
  /** The version that ran before, or null: the agent the machine was installed with. */
  previous: string | null;
  /** Milliseconds since 1970: past it, the upgrade is rolled back. */
  deadline: number;
  starts: number;
}

export interface Failed {
  version: string;
  sha256: string;
  reason: string;
  at: string;
}

export const packageRoot = (stateDir: string) => join(stateDir, 'agent');
const versionsDir = (root: string) => join(root, 'versions');
export const versionDir = (root: string, version: string) => join(versionsDir(root), version);
const currentLink = (root: string) => join(root, 'current');
const pendingPath = (root: string) => join(root, 'pending.json');
const failedPath = (root: string) => join(root, 'failed.json');

/** Where a package puts the agent: the tree the mesh-host package installs at /usr/lib/mesh. */
export const AGENT_IN_PACKAGE = 'usr/lib/mesh';

function readJson<T>(path: string): T | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

export const readPending = (root: string) => readJson<Pending>(pendingPath(root));
export const readFailed = (root: string) => readJson<Failed>(failedPath(root));
const write = (path: string, v: unknown) => writeAtomic(path, JSON.stringify(v, null, 2) + '\n', 0o600);

/** The version `current` points at, or null (the installed agent runs). */
export function currentVersion(root: string): string | null {
  try {
    return basename(readlinkSync(currentLink(root)));
  } catch {
    return null;
  }
}

/** Point `current` at VERSION (null: remove it) in one rename, so a start never finds it half made. */
function pointCurrent(root: string, version: string | null): void {
  if (version === null) {
    rmSync(currentLink(root), { force: true });
    return;
  }
  const tmp = `${currentLink(root)}.${process.pid}`;
  rmSync(tmp, { force: true });
  symlinkSync(join('versions', version), tmp);
  renameSync(tmp, currentLink(root));
}

/** The node binary and agent entry to start: the current version's, else the installed agent's (ENTRY, NODE). */
export function startCommand(
  root: string,
  installed: { node: string; entry: string },
): { node: string; entry: string } {
  const v = currentVersion(root);
  if (!v) return installed;
  const tree = join(versionDir(root, v), AGENT_IN_PACKAGE);
  const node = join(tree, 'node', 'bin', 'node');
  return { node: existsSync(node) ? node : installed.node, entry: join(tree, 'dist', 'host', 'cli.js') };
}

/**
 * Make VERSION, already unpacked, the one that starts next: the pending
 * marker first (so a crash between the two is rolled back, not kept), then
 * the switch.
 */
export async function switchTo(root: string, version: string, sha256: string, waitMs: number): Promise<Pending> {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const p: Pending = { version, sha256, previous: currentVersion(root), deadline: Date.now() + waitMs, starts: 0 };
  await write(pendingPath(root), p);
  pointCurrent(root, version);
  return p;
}

/**
 * The new agent reported: the upgrade is proven, and nothing rolls it back.
 * The versions it replaced are removed then, and not before: until now one
 * of them was what a rollback would start; from now on none ever starts
 * again, and each upgrade would otherwise leave a whole agent on the disk.
 */
export function confirm(root: string, version: string): boolean {
  const p = readPending(root);
  if (!p || p.version !== version) return false;
  rmSync(pendingPath(root), { force: true });
  for (const d of readdirSync(versionsDir(root)))
    if (d !== version) rmSync(join(versionsDir(root), d), { recursive: true, force: true });
  return true;
}

/**
 * Run before every start of the agent. A pending upgrade counts one more
 * start; started more than MAX_STARTS times, or past its deadline, it is
 * switched back to the version before it, and remembered as failed so the
 * agent that comes back does not take it again. Returns what it did.
 */
export async function guard(root: string, now = Date.now()): Promise<{ rolledBack?: Failed; starting?: Pending }> {
  const p = readPending(root);
  if (!p) return {};
  p.starts += 1;
  const reason =
    p.starts > MAX_STARTS
      ? `it did not stay up: started ${MAX_STARTS} times without reporting`
      : now > p.deadline
        ? `it did not report before its deadline, ${new Date(p.deadline).toISOString()}`
        : null;
  if (!reason) {
    await write(pendingPath(root), p);
    return { starting: p };
  }
  return { rolledBack: await rollBack(root, p, reason, now) };
}

/** Switch PENDING back to the version before it and remember it as failed, for REASON. */
export async function rollBack(root: string, p: Pending, reason: string, now = Date.now()): Promise<Failed> {
  const f: Failed = { version: p.version, sha256: p.sha256, reason, at: new Date(now).toISOString() };
  await write(failedPath(root), f);
  pointCurrent(root, p.previous);
  rmSync(pendingPath(root), { force: true });
  return f;
}
