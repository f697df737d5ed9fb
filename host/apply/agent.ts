// The agent resource (V2): the mesh-host version this node must run. Held
// when the running agent is that version. Otherwise its package is fetched
// over the broker, checked against the sha256 the signed declaration names
// (nothing of bytes that differ is unpacked), unpacked into a folder of its
// own under the package root, made current, and the host restarts into it
// once this apply is reported. A version that already failed here (the guard
// rolled it back) is not tried again: it is reported failing until another
// version is declared. Removing the resource changes nothing: the node keeps
// the agent it runs.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentResource } from '../../src/wire/resources.js';
import type { Driver } from './driver.js';
import { VERSION } from '../../src/sys/version.js';
import { refuse } from '../../src/sys/errors.js';
import { run } from '../../src/sys/proc.js';
import { writeAtomic } from '../../src/sys/atomic.js';
import {
  packageRoot,
  versionDir,
  readFailed,
  readPending,
  rollBack,
  switchTo,
  AGENT_IN_PACKAGE,
} from '../upgrade/package_root.js';

/** How long a new agent has to report after the switch before the guard takes it back. */
export const UPGRADE_WAIT_MS = 120_000;

/** The bytes checked against the sha256 the declaration names: refused (MSHZ3) when they differ. */
export function checkPackage(r: AgentResource, bytes: Buffer): void {
  const got = createHash('sha256').update(bytes).digest('hex');
  if (got !== r.sha256 || bytes.length !== r.size)
    throw refuse(
      'MSHZ3',
      `the package for mesh-host ${r.version} is ${bytes.length} bytes with sha256 ${got}; the declaration names ${r.size} bytes with sha256 ${r.sha256}: nothing of it was installed`,
    );
}

/** Unpack checked bytes into the package root's folder for r.version (made whole, then renamed in). */
export async function unpack(root: string, r: AgentResource, bytes: Buffer): Promise<string> {
  const dir = versionDir(root, r.version);
  mkdirSync(join(root, 'versions'), { recursive: true, mode: 0o700 });
  const deb = join(root, `.${r.sha256}.deb`);
  const partial = `${dir}.partial`;
  rmSync(partial, { recursive: true, force: true });
  await writeAtomic(deb, bytes, 0o600);
  try {
    await run('dpkg-deb', ['-x', deb, partial], { timeoutMs: 120_000 });
  } finally {
    rmSync(deb, { force: true });
  }
  if (!existsSync(join(partial, AGENT_IN_PACKAGE, 'dist', 'host', 'cli.js'))) {
    rmSync(partial, { recursive: true, force: true });
    throw refuse(
      'MSHZ8',
      `the package for mesh-host ${r.version} holds no agent at /${AGENT_IN_PACKAGE}/dist/host/cli.js: it is not a mesh-host package`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(partial, dir);
  return dir;
}

/** The package this process made current: it restarts into it, and takes nothing else meanwhile. */
let switchedHere: string | null = null;

export const agentDriver: Driver<AgentResource> = {
  kind: 'agent',
  target: () => 'mesh-host',
  digest: (r) => r.sha256,

  async observe(r) {
    return r.version === VERSION ? 'ok' : 'drift';
  },

  async apply(r, ctx) {
    if (r.version === VERSION) return false;
    const root = packageRoot(ctx.stateDir);
    // Pending, and yet another version runs: what started this agent did not start it from the package root
    // (a unit that runs the installed tree). Taking it again would restart into the same tree for ever.
    const pending = readPending(root);
    // Made current by this very process, which ends as soon as the apply is reported.
    if (pending && pending.version === r.version && switchedHere === r.sha256) return false;
    if (pending && pending.version === r.version)
      await rollBack(root, pending, `mesh-host ${VERSION} was started instead, not from ${root}/current`);
    const failed = readFailed(root);
    if (failed && failed.sha256 === r.sha256)
      throw refuse(
        'MSHZ4',
        `mesh-host ${r.version} did not come up on this node (${failed.reason}); it went back to ${VERSION} by itself`,
      );
    if (!ctx.agent) throw new Error(`mesh-host ${r.version} is declared, and only a running agent upgrades itself`);
    const bytes = await ctx.agent.fetch(r.sha256, r.size);
    checkPackage(r, bytes);
    await unpack(root, r, bytes);
    await switchTo(root, r.version, r.sha256, UPGRADE_WAIT_MS);
    switchedHere = r.sha256;
    ctx.log(`agent: mesh-host ${r.version} unpacked and made current; restarting into it from ${VERSION}`);
    ctx.agent.restart();
    return true;
  },

  // The node keeps the agent it runs: a declaration without one says nothing about it.
  async remove() {},
};
