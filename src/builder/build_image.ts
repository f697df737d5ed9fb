// One build: clone the source, check out the requested commit, build the
// image with podman, push it, and say what was built. Any failure becomes a
// result with the end of the log (B1: a failure is an answer), never a throw
// the caller has to interpret. Only "abandoned" (the link went) throws: then
// nobody may answer, and the broker gives the request to another builder.
import { mkdtemp, rm, readFile, realpath, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { COMMIT, DIGEST, type BuildRequest, type BuildResult } from '../wire/build.js';
import { runAny, LastLines } from '../sys/proc.js';

export interface BuildSettings {
  /** host:port images are pushed to. */
  registry: string;
  /** podman's --pull policy for base images. */
  pull: string;
  env: NodeJS.ProcessEnv;
  /** Where clones are made; emptied when the builder starts (a killed build leaves its clone). */
  workRoot: string;
}

// LAB-NOTES "Containers": crun fails here on setrlimit, and podman's own
// networks rewrite the host's firewall; a build needs neither.
const RUNTIME_FLAGS = [
  '--runtime',
  'runc',
  '--ulimit',
  'nofile=1024:1024',
  '--ulimit',
  'nproc=1024:1024',
  '--network',
  'none',
];

/** Plain HTTP is only for a registry on this machine. */
export function loopback(registry: string): boolean {
  return /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])(:\d+)?$/.test(registry);
}

class Failed extends Error {}

export async function buildImage(
  req: BuildRequest,
  s: BuildSettings,
  say: (line: string) => void,
  signal: AbortSignal,
): Promise<BuildResult> {
  const work = await mkdtemp(join(s.workRoot, 'build-'));
  const r: Run = { tail: new LastLines(), env: { ...s.env, GIT_TERMINAL_PROMPT: '0' }, signal, src: join(work, 'src') };
  let commit: string | undefined;
  let head: string | undefined;
  let headSeenAt: string | undefined;
  try {
    say(`cloning ${req.git}`);
    headSeenAt = new Date().toISOString();
    await step(r, 'cloning the source', 'git', [
      '-c',
      'protocol.ext.allow=never',
      'clone',
      '--quiet',
      '--no-checkout',
      '--',
      req.git,
      r.src,
    ]);
    head = await resolveRef(r, req.track);
    commit = await resolveRef(r, req.ref);
    if (!commit) throw new Failed(`${req.git} has no branch, tag or commit ${req.ref}`);
    await step(
      r,
      'checking out',
      'git',
      git(r, '-c', 'advice.detachedHead=false', 'checkout', '--quiet', '--detach', commit),
    );
    const { context, file } = await containerfile(r.src, req.path, commit);
    const digest = await buildAndPush(r, req, s, say, { commit, context, file, work });
    return {
      v: 1,
      id: req.id,
      kind: 'result',
      ok: true,
      commit,
      head,
      headSeenAt,
      image: `${s.registry}/${req.module}`,
      digest,
    };
  } catch (err) {
    if (signal.aborted) throw err;
    const error = err instanceof Failed ? err.message : `the builder could not build: ${(err as Error).message}`;
    return {
      v: 1,
      id: req.id,
      kind: 'result',
      ok: false,
      commit,
      head,
      headSeenAt,
      error: error.slice(0, 2000),
      log: r.tail.text().slice(-16000),
    };
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => {});
  }
}

/** One build's commands: the log's last lines, their environment, the abort signal and the clone's folder. */
interface Run {
  tail: LastLines;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  src: string;
}

/** CMD ARGS run, every line kept in the log's tail (and told ONLINE); a non-zero exit fails the build as WHAT. */
async function step(r: Run, what: string, cmd: string, args: string[], onLine?: (l: string) => void): Promise<void> {
  r.tail.push(`$ ${cmd} ${args.join(' ')}`);
  const x = await runAny(cmd, args, {
    env: r.env,
    signal: r.signal,
    onLine: (l) => {
      r.tail.push(l);
      onLine?.(l);
    },
  });
  if (x.code !== 0) throw new Failed(`${what} failed (exit ${x.code})`);
}

/** git's arguments in the clone, with the ext transport refused. */
const git = (r: Run, ...args: string[]) => ['-c', 'protocol.ext.allow=never', '-C', r.src, ...args];

/** The commit REF names in the clone: a branch of origin, a tag, or a commit; undefined when none. */
async function resolveRef(r: Run, ref: string): Promise<string | undefined> {
  const candidates = ref === 'HEAD' ? ['HEAD'] : [`refs/remotes/origin/${ref}`, `refs/tags/${ref}`, ref];
  for (const c of candidates) {
    const x = await runAny('git', git(r, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${c}^{commit}`), {
      env: r.env,
      signal: r.signal,
    });
    const line = x.stdout.trim().split('\n').at(-1) ?? '';
    if (x.code === 0 && COMMIT.test(line)) return line;
  }
  return undefined;
}

/** The build's context folder PATH inside the clone SRC, and its Containerfile; refused when either is not there. */
async function containerfile(src: string, path: string, commit: string): Promise<{ context: string; file: string }> {
  // The context must be inside the clone, even through a symlink in the repository.
  const context = await realpath(join(src, path)).catch(() => undefined);
  const root = await realpath(src);
  if (!context || (context !== root && !context.startsWith(root + sep)) || !(await stat(context)).isDirectory()) {
    throw new Failed(`${path} is not a folder inside the repository at ${commit.slice(0, 12)}`);
  }
  const file = join(context, 'Containerfile');
  if (!(await stat(file).catch(() => undefined))?.isFile())
    throw new Failed(`there is no Containerfile in ${path} at ${commit.slice(0, 12)}`);
  return { context, file };
}

/** The image built with podman from FILE in CONTEXT, tagged with the commit, pushed: its manifest digest. */
async function buildAndPush(
  r: Run,
  req: BuildRequest,
  s: BuildSettings,
  say: (line: string) => void,
  { commit, context, file, work }: { commit: string; context: string; file: string; work: string },
): Promise<string> {
  const tag = `${s.registry}/${req.module}:${commit.slice(0, 12)}`;
  const tls = loopback(s.registry) ? ['--tls-verify=false'] : [];
  say(`building ${req.module} at ${commit.slice(0, 12)}`);
  await step(
    r,
    'podman build',
    'podman',
    ['build', ...RUNTIME_FLAGS, `--pull=${s.pull}`, ...tls, '-f', file, '-t', tag, '--', context],
    (l) => {
      if (/^STEP \d+\/\d+: /.test(l)) say(l.slice(0, 300));
    },
  );
  say(`pushing ${tag}`);
  const digestFile = join(work, 'digest');
  await step(r, 'podman push', 'podman', ['push', ...tls, '--digestfile', digestFile, '--', tag]);
  const digest = (await readFile(digestFile, 'utf8')).trim();
  if (!DIGEST.test(digest))
    throw new Failed(`podman push wrote no manifest digest (${JSON.stringify(digest.slice(0, 80))})`);
  return digest;
}
