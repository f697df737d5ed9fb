// A podman container, named mesh-<name> and labelled with the digest of its
// declared shape, so observe compares labels instead of re-deriving podman's
// view of a command line. The host reconciles, so podman restarts nothing.
import type { ContainerResource } from '../../src/wire/resources.js';
import type { Driver, DriverContext, Observed } from './driver.js';
import { digestOf } from './digest.js';
import { checkPath } from './paths.js';
import { run, runAny } from '../../src/sys/proc.js';
import { refuse } from '../../src/sys/errors.js';
import { isNodeName } from '../../src/wire/names.js';

// systemctl and podman answer in seconds; five minutes is a hung tool (or a slow image pull), said as such.
const LIMIT = { timeoutMs: 300_000 };

const PODMAN = 'podman';
// Facts of the machines we run on (LAB-NOTES "Containers"): crun fails on
// setrlimit with hybrid cgroups, and podman's default network rewrites the
// root namespace's forwarding and iptables.
const RUNTIME_FLAGS = ['--runtime', 'runc', '--ulimit', 'nofile=1024:1024', '--ulimit', 'nproc=1024:1024'];
const STOP_SECONDS = '5';
export const DIGEST_LABEL = 'mesh.digest';

const containerName = (r: { name: string }) => `mesh-${r.name}`;

function check(r: ContainerResource, ctx: DriverContext): void {
  if (!isNodeName(r.name)) {
    throw refuse(
      'MSH81',
      `Container name ${JSON.stringify(r.name)} is refused`,
      'names are [a-z][a-z0-9-]{0,62}. Fix the declaration',
    );
  }
  const network = r.network ?? 'none';
  if (network !== 'none' && !/^ns:\/run\/netns\/[A-Za-z0-9_.-]+$/.test(network)) {
    throw refuse('MSH83', `Container ${r.name}: network ${JSON.stringify(network)} is refused`);
  }
  for (const f of r.envFiles ?? []) checkPath(f, ctx);
  for (const m of r.mounts ?? []) {
    checkPath(m.source, ctx);
    // -v splits on ':' and options on ','; a path holding either would be misread.
    if (!m.target.startsWith('/') || /[:,]/.test(m.source + m.target)) {
      throw refuse('MSH84', `Container ${r.name}: mount ${m.source} -> ${m.target} is refused`);
    }
  }
}

const digest = (r: ContainerResource) =>
  digestOf({
    kind: 'container',
    name: r.name,
    image: r.image,
    command: r.command,
    envFiles: r.envFiles,
    mounts: r.mounts,
    network: r.network ?? 'none',
  });

interface Seen {
  label: string | undefined;
  running: boolean;
}

async function inspect(name: string): Promise<Seen | null> {
  const r = await runAny(PODMAN, ['container', 'inspect', '--format', 'json', name], LIMIT);
  if (r.code !== 0) {
    if (/no such container/i.test(r.stderr)) return null;
    throw new Error(`podman could not inspect ${name}: ${r.stderr.trim()}`);
  }
  const [c] = JSON.parse(r.stdout) as { Config?: { Labels?: Record<string, string> }; State?: { Running?: boolean } }[];
  if (!c) return null;
  return { label: c.Config?.Labels?.[DIGEST_LABEL], running: c.State?.Running === true };
}

function runArgs(r: ContainerResource): string[] {
  const args = [
    'run',
    '--detach',
    '--name',
    containerName(r),
    '--label',
    `${DIGEST_LABEL}=${digest(r)}`,
    '--restart=no',
    ...RUNTIME_FLAGS,
    '--network',
    r.network ?? 'none',
  ];
  for (const f of r.envFiles ?? []) args.push('--env-file', f);
  for (const m of r.mounts ?? []) args.push('-v', `${m.source}:${m.target}${m.readOnly ? ':ro' : ''}`);
  args.push(r.image, ...(r.command ?? []));
  return args;
}

async function removeContainer(name: string): Promise<void> {
  const r = await runAny(PODMAN, ['rm', '--force', '--time', STOP_SECONDS, name], LIMIT);
  if (r.code !== 0 && !/no such container/i.test(r.stderr)) {
    throw new Error(`podman could not remove ${name}: ${r.stderr.trim()}`);
  }
}

async function create(r: ContainerResource, ctx: DriverContext): Promise<void> {
  try {
    await run(PODMAN, runArgs(r), LIMIT);
  } catch (err) {
    // A run that created the container and then failed to start it would
    // leave a container with the right label that observe calls stopped.
    await removeContainer(containerName(r)).catch(() => {});
    throw err;
  }
  ctx.log(`container ${containerName(r)} created`);
}

export const containerDriver: Driver<ContainerResource> = {
  kind: 'container',
  target: containerName,
  digest,
  async observe(r, ctx): Promise<Observed> {
    check(r, ctx);
    const seen = await inspect(containerName(r));
    if (!seen) return 'absent';
    return seen.label === digest(r) && seen.running ? 'ok' : 'drift';
  },
  async apply(r, ctx) {
    check(r, ctx);
    const seen = await inspect(containerName(r));
    if (seen && seen.label === digest(r)) {
      if (seen.running) return false;
      await run(PODMAN, ['start', containerName(r)], LIMIT);
    } else {
      if (seen) await removeContainer(containerName(r));
      await create(r, ctx);
    }
    ctx.changed.add(r.id);
    return true;
  },
  async restart(r, ctx) {
    check(r, ctx);
    // podman reads --env-file once, when the container is created: a restart
    // would keep the old values. A container with env files is made anew.
    if ((r.envFiles ?? []).length > 0) {
      await removeContainer(containerName(r));
      await create(r, ctx);
    } else {
      await run(PODMAN, ['restart', '--time', STOP_SECONDS, containerName(r)], LIMIT);
    }
  },
  async remove(held) {
    await removeContainer(held.target);
  },
};
