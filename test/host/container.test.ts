// One suite, real podman: containers take seconds each.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { containerDriver, DIGEST_LABEL } from '../../host/apply/container.js';
import { apply, reconcile } from '../../host/apply/engine.js';
import type { ContainerResource, Resource } from '../../src/wire/resources.js';
import { sandbox, file, until, type Sandbox } from './helpers.js';

const test = suite('podman container');
const IMAGE = 'localhost/mesh-test-busybox:latest';
let s: Sandbox;

const podman = (...args: string[]) =>
  execFileSync('podman', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const exists = (name: string) => {
  try {
    podman('container', 'exists', name);
    return true;
  } catch {
    return false;
  }
};

test.before(async () => {
  // An image holding nothing but busybox-static, made without a registry.
  const dir = await mkdtemp(join(tmpdir(), 'mesh-image-'));
  await mkdir(join(dir, 'rootfs', 'bin'), { recursive: true });
  await copyFile('/bin/busybox', join(dir, 'rootfs', 'bin', 'busybox'));
  for (const app of ['sh', 'sleep', 'cat', 'echo', 'env']) await symlink('busybox', join(dir, 'rootfs', 'bin', app));
  execFileSync('tar', ['-C', join(dir, 'rootfs'), '-cf', join(dir, 'rootfs.tar'), '.']);
  podman('import', join(dir, 'rootfs.tar'), IMAGE);
  await rm(dir, { recursive: true, force: true });
  s = await sandbox();
});

test.after(async () => {
  for (const name of ['mesh-greeter']) if (exists(name)) podman('rm', '--force', '--time', '0', name);
});

test('created, observed, restarted when its env file changes (D4), corrected when killed (D6), removed', async () => {
  const out = join(s.root, 'out');
  const envPath = join(s.root, 'greeter.env');
  const seen = join(out, 'seen');
  const env = (v: string) => file(envPath, `GREETING=${v}\n`, { mode: '0600' });
  const outDir: Resource = { kind: 'directory', id: `directory:${out}`, path: out, mode: '0755' };
  const c: ContainerResource = {
    kind: 'container',
    id: 'container:greeter',
    name: 'greeter',
    image: IMAGE,
    // Each start appends what it was told; TERM ends it at once (PID 1 ignores
    // TERM unless it traps it, which would cost the 5 s stop timeout).
    command: ['/bin/sh', '-c', `echo "$GREETING" >> /out/seen; trap 'exit 0' TERM; while :; do sleep 1; done`],
    envFiles: [envPath],
    mounts: [{ source: out, target: '/out' }],
    restartOn: [envPath],
  };
  const lines = () =>
    readFile(seen, 'utf8').then(
      (t) => t.split('\n').filter(Boolean),
      () => [] as string[],
    );

  const first = await apply([outDir, env('hello'), c], 'declared', s.opts);
  assert.equal(first.failed, []);
  assert.ok(first.changed.includes(c.id));
  assert.equal(first.restarted, []);
  assert.equal(await until(lines, (l) => l.length === 1), ['hello']);
  assert.is(
    podman('container', 'inspect', '--format', `{{ index .Config.Labels "${DIGEST_LABEL}" }}`, 'mesh-greeter'),
    containerDriver.digest(c),
  );
  assert.is(podman('container', 'inspect', '--format', '{{ .HostConfig.NetworkMode }}', 'mesh-greeter'), 'none');
  assert.is(await containerDriver.observe(c, s.ctx()), 'ok');

  const same = await apply([outDir, env('hello'), c], 'declared', s.opts);
  assert.equal([same.changed, same.restarted], [[], []]);

  const changed = await apply([outDir, env('bonjour'), c], 'declared', s.opts);
  assert.equal(changed.restarted, [c.id]);
  assert.equal(await until(lines, (l) => l.length === 2), ['hello', 'bonjour'], 'restarted with the new env file');

  const quiet = await apply([outDir, env('bonjour'), c], 'declared', s.opts);
  assert.equal(quiet.restarted, [], 'and not again in the next apply');

  const other = { ...c, command: [...c.command!, 'extra-arg'] };
  assert.is(await containerDriver.observe(other, s.ctx()), 'drift', 'another command is drift by the digest label');

  podman('kill', 'mesh-greeter');
  assert.is(await containerDriver.observe(c, s.ctx()), 'drift');
  const fixed = await reconcile([outDir, env('bonjour'), c], 'declared', s.opts);
  assert.equal(fixed.corrected, [c.id]);
  assert.equal(await until(lines, (l) => l.length === 3), ['hello', 'bonjour', 'bonjour']);

  const gone = await apply([outDir, env('bonjour')], 'declared', s.opts);
  assert.equal(gone.removed, [c.id]);
  assert.not.ok(exists('mesh-greeter'));
  assert.is(await containerDriver.observe(c, s.ctx()), 'absent');
});

test('a mount or env file outside the roots, or a podman network, is refused before podman runs', async () => {
  const base: ContainerResource = { kind: 'container', id: 'container:bad', name: 'bad', image: IMAGE };
  for (const bad of [
    // Outside the roots, but sandbox paths: never a real system path in a test.
    { ...base, mounts: [{ source: s.stateDir, target: '/host' }] },
    { ...base, envFiles: [join(s.stateDir, 'env')] },
    { ...base, network: 'bridge' },
  ]) {
    let msg = '';
    await containerDriver.apply(bad, s.ctx()).catch((e) => (msg = e.message));
    assert.match(msg, /refused/);
  }
  assert.not.ok(exists('mesh-bad'));
});

test.run();
