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
  const tail = new LastLines();
  const work = await mkdtemp(join(s.workRoot, 'build-'));
  const src = join(work, 'src');
  const env = { ...s.env, GIT_TERMINAL_PROMPT: '0' };
  let commit: string | undefined;
  let head: string | undefined;
  let headSeenAt: string | undefined;
  const step = async (what: string, cmd: string, args: string[], onLine?: (l: string) => void) => {
    tail.push(`$ ${cmd} ${args.join(' ')}`);
    const r = await runAny(cmd, args, {
      env,
      signal,
      onLine: (l) => {
        tail.push(l);
        onLine?.(l);
      },
    });
    if (r.code !== 0) throw new Failed(`${what} failed (exit ${r.code})`);
  };
  const git = (...args: string[]) => ['-c', 'protocol.ext.allow=never', '-C', src, ...args];
  const resolve = async (ref: string): Promise<string | undefined> => {
    const candidates = ref === 'HEAD' ? ['HEAD'] : [`refs/remotes/origin/${ref}`, `refs/tags/${ref}`, ref];
    for (const c of candidates) {
      const r = await runAny('git', git('rev-parse', '--verify', '--quiet', '--end-of-options', `${c}^{commit}`), {
        env,
        signal,
      });
      const line = r.stdout.trim().split('\n').at(-1) ?? '';
      if (r.code === 0 && COMMIT.test(line)) return line;
    }
    return undefined;
  };
  try {
    say(`cloning ${req.git}`);
    headSeenAt = new Date().toISOString();
    await step('cloning the source', 'git', [
      '-c',
      'protocol.ext.allow=never',
      'clone',
      '--quiet',
      '--no-checkout',
      '--',
      req.git,
      src,
    ]);
    head = await resolve(req.track);
    commit = await resolve(req.ref);
    if (!commit) throw new Failed(`${req.git} has no branch, tag or commit ${req.ref}`);
    await step(
      'checking out',
      'git',
      git('-c', 'advice.detachedHead=false', 'checkout', '--quiet', '--detach', commit),
    );
    // The context must be inside the clone, even through a symlink in the repository.
    const context = await realpath(join(src, req.path)).catch(() => undefined);
    const root = await realpath(src);
    if (!context || (context !== root && !context.startsWith(root + sep)) || !(await stat(context)).isDirectory()) {
      throw new Failed(`${req.path} is not a folder inside the repository at ${commit.slice(0, 12)}`);
    }
    const file = join(context, 'Containerfile');
    if (!(await stat(file).catch(() => undefined))?.isFile())
      throw new Failed(`there is no Containerfile in ${req.path} at ${commit.slice(0, 12)}`);
    const tag = `${s.registry}/${req.module}:${commit.slice(0, 12)}`;
    const tls = loopback(s.registry) ? ['--tls-verify=false'] : [];
    say(`building ${req.module} at ${commit.slice(0, 12)}`);
    await step(
      'podman build',
      'podman',
      ['build', ...RUNTIME_FLAGS, `--pull=${s.pull}`, ...tls, '-f', file, '-t', tag, '--', context],
      (l) => {
        if (/^STEP \d+\/\d+: /.test(l)) say(l.slice(0, 300));
      },
    );
    say(`pushing ${tag}`);
    const digestFile = join(work, 'digest');
    await step('podman push', 'podman', ['push', ...tls, '--digestfile', digestFile, '--', tag]);
    const digest = (await readFile(digestFile, 'utf8')).trim();
    if (!DIGEST.test(digest))
      throw new Failed(`podman push wrote no manifest digest (${JSON.stringify(digest.slice(0, 80))})`);
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
      log: tail.text().slice(-16000),
    };
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => {});
  }
}
