// The three programs print the version of the package they came from, read
// from package.json: the one place it is written (and the bundle's tarball is
// named after it).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runAny } from '../../src/sys/proc.js';

const bin = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as {
  version: string;
};

const V = suite('--version');

V('mesh, mesh-host and mesh-builder --version print package.json version', async () => {
  assert.match(pkg.version, /^\d+\.\d+\.\d+/);
  for (const [name, path] of [
    ['mesh', 'src/cli/mesh.js'],
    ['mesh-host', 'host/cli.js'],
    ['mesh-builder', 'src/builder/cli.js'],
  ]) {
    const r = await runAny(process.execPath, [bin(path!), '--version']);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.trim(), `${name}, ${pkg.version}`);
  }
});

V.run();
