// `npm run bundle`: one tarball with its checksum, holding a Node >= 20.19,
// dist/, the migrations and production node_modules only; install.sh from it
// runs on a machine whose node is too old (Debian 12's 18), using the
// bundle's runtime after checking that runtime against its own checksum.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, writeFileSync, chmodSync, existsSync, appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const test = suite('bundle runtime tarball');
const out = mkdtempSync(join(tmpdir(), 'mesh-pack-'));
let tarball = '';
const unpacked = join(out, 'root');

test.before(() => {
  execFileSync('bash', [join(REPO, 'bundle/pack.sh'), out], { stdio: 'pipe' });
  tarball = readdirSync(out).find((f) => f.endsWith('.tar.gz'))!;
  mkdirSync(unpacked);
  execFileSync('tar', ['-C', unpacked, '-xzf', join(out, tarball)]);
});

test('one tarball and its sha256 checksum, which sha256sum accepts', () => {
  assert.match(tarball, /^mesh-[\d.]+-linux-[a-z0-9]+\.tar\.gz$/);
  const r = spawnSync('sha256sum', ['-c', `${tarball}.sha256`], { cwd: out, encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
});

test('it holds a Node >= 20.19, dist, sql and the production dependencies, and nothing only tests need', () => {
  const mesh = join(unpacked, 'mesh');
  const v = execFileSync(join(mesh, 'node/bin/node'), ['-p', 'process.versions.node'], { encoding: 'utf8' })
    .trim()
    .split('.')
    .map(Number);
  assert.ok(v[0]! > 20 || (v[0] === 20 && v[1]! >= 19), `node ${v.join('.')}`);
  for (const p of [
    'BUNDLE',
    'dist/bundle/install.js',
    'dist/host/cli.js',
    'dist/src/cli/mesh.js',
    'sql/assignment/0007-firewall.sql',
    'bundle/install.sh',
    'node_modules/amqplib',
    'node_modules/postgres',
  ]) {
    assert.ok(existsSync(join(mesh, p)), p);
  }
  for (const p of ['node_modules/typescript', 'node_modules/uvu', 'node_modules/fast-check', 'dist/test', 'dist/lab'])
    assert.not.ok(existsSync(join(mesh, p)), p);
});

/** PATH with a `node` that says it is Debian 12's 18 (and fails the version check). */
function oldNodePath(): string {
  const bin = mkdtempSync(join(tmpdir(), 'old-node-'));
  writeFileSync(join(bin, 'node'), '#!/bin/sh\n[ "$1" = -v ] && echo v18.19.0\nexit 1\n');
  chmodSync(join(bin, 'node'), 0o755);
  return `${bin}:/usr/sbin:/usr/bin:/sbin:/bin`;
}

test("install.sh on a machine whose node is too old runs with the bundle's own runtime", () => {
  const r = spawnSync('bash', [join(unpacked, 'mesh/bundle/install.sh'), '--help'], {
    encoding: 'utf8',
    env: { PATH: oldNodePath() },
  });
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, /Usage: install\.js/);
  assert.match(r.stdout, /--ssh-port N \(22\)/);
});

test('a runtime that does not match its checksum is refused, naming the remedy', () => {
  const copy = join(out, 'bad');
  mkdirSync(copy);
  execFileSync('tar', ['-C', copy, '-xzf', join(out, tarball)]);
  appendFileSync(join(copy, 'mesh/node/bin/node'), 'x');
  const r = spawnSync('bash', [join(copy, 'mesh/bundle/install.sh'), '--help'], {
    encoding: 'utf8',
    env: { PATH: oldNodePath() },
  });
  assert.is.not(r.status, 0);
  assert.match(r.stderr, /does not match its checksum: unpack the tarball again/);
});

test.run();
