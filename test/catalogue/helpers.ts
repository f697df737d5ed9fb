// Builds for tests: git repositories on disk (file:// sources, no network),
// podman storage private to each builder (its own storage.conf, so parallel
// suites and the machine's own images never meet), a base image imported
// from busybox-static, and real mesh-builder processes.
import { mkdtempSync, writeFileSync, mkdirSync, rmSync, copyFileSync, symlinkSync, readFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/sys/proc.js';
import { spawnProc, type Mesh } from '../harness/mesh.js';

export const MESH_BUILDER = fileURLToPath(new URL('../../src/builder/cli.js', import.meta.url));
export const BASE_IMAGE = 'localhost/mesh-base:latest';

/** A tarball holding busybox-static and a few of its applets: the only base image builds may use. */
export async function baseTarball(dir: string): Promise<string> {
  const rootfs = join(dir, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  copyFileSync('/bin/busybox', join(rootfs, 'bin', 'busybox'));
  for (const app of ['sh', 'sleep', 'cat', 'echo', 'false', 'true']) symlinkSync('busybox', join(rootfs, 'bin', app));
  const tar = join(dir, 'base.tar');
  await run('tar', ['-C', rootfs, '-cf', tar, '.']);
  return tar;
}

export interface Storage {
  dir: string;
  env: NodeJS.ProcessEnv;
  podman(...args: string[]): Promise<string>;
  remove(): void;
}

/** Podman storage of its own (vfs: nothing mounted, so removal is rm -rf even after a SIGKILL), holding the base image. */
export async function storage(tar: string): Promise<Storage> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-podman-'));
  writeFileSync(
    join(dir, 'storage.conf'),
    `[storage]\ndriver = "vfs"\ngraphroot = "${dir}/graph"\nrunroot = "${dir}/run"\n`,
  );
  writeFileSync(
    join(dir, 'containers.conf'),
    `[engine]\ntmp_dir = "${dir}/tmp"\nvolume_path = "${dir}/volumes"\nruntime = "runc"\n`,
  );
  const env = { CONTAINERS_STORAGE_CONF: join(dir, 'storage.conf'), CONTAINERS_CONF: join(dir, 'containers.conf') };
  const podman = (...args: string[]) => run('podman', args, { env: { ...process.env, ...env } });
  await podman('import', tar, BASE_IMAGE);
  return { dir, env, podman, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface Repo {
  dir: string;
  url: string;
  commit(files: Record<string, string>, message: string): Promise<string>;
}

export async function repo(): Promise<Repo> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-src-'));
  const git = (...args: string[]) => run('git', ['-C', dir, ...args]);
  await git('init', '--quiet', '--initial-branch=main');
  await git('config', 'user.email', 'test@mesh.invalid');
  await git('config', 'user.name', 'mesh test');
  return {
    dir,
    url: `file://${dir}`,
    async commit(files, message) {
      for (const [p, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, p)), { recursive: true });
        writeFileSync(join(dir, p), text);
      }
      await git('add', '--all');
      await git('commit', '--quiet', '-m', message);
      return (await git('rev-parse', 'HEAD')).trim();
    },
  };
}

export interface BuilderProc {
  name: string;
  dir: string;
  child: ChildProcess;
  output(): string;
  waitFor(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Kill it and everything it started, as a machine dying would. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** `mesh builder add`, `mesh-builder enrol` (line on stdin), `mesh-builder run` in a process group of its own. */
export async function startBuilder(mesh: Mesh, name: string, registry: string, st: Storage): Promise<BuilderProc> {
  const added = await mesh.cli(['builder', 'add', name, '--json']);
  if (added.code !== 0) throw new Error(`builder add ${name}: ${added.stderr}`);
  const line = JSON.parse(added.stdout).line as string;
  const dir = mkdtempSync(join(tmpdir(), `mesh-builder-${name}-`));
  const env = {
    ...process.env,
    ...st.env,
    MESH_BUILDER_DIR: dir,
    MESH_BUILDER_REGISTRY: registry,
    MESH_BUILDER_PULL: 'never',
  };
  await run(process.execPath, [MESH_BUILDER, 'enrol'], { env, input: line });
  const p = spawnProc(process.execPath, [MESH_BUILDER, 'run'], env, undefined, true);
  const child = p.child;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const b: BuilderProc = {
    name,
    dir,
    child,
    output: p.output,
    waitFor: (re, timeoutMs = 60_000) => p.waitFor(re, timeoutMs),
    async kill() {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
      await exited;
    },
    async stop() {
      if (alive()) {
        child.kill('SIGTERM');
        const t = setTimeout(() => {
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            /* gone */
          }
        }, 10_000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await b.waitFor(/consuming mesh\.build/, 30_000);
  return b;
}

export const credentialOf = (b: BuilderProc) => JSON.parse(readFileSync(join(b.dir, 'credential.json'), 'utf8'));

/** How many messages wait on QUEUE in the mesh's vhost, as the broker's management API counts them (undefined until it has counted). */
export async function waiting(mesh: Mesh, queue: string): Promise<number | undefined> {
  const q = (await (await mesh.mgmt('GET', `/queues/${mesh.vhost}/${queue}`)).json()) as { messages?: number };
  return q.messages;
}
