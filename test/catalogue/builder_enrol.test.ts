// mesh-builder enrol checks its line against the real broker before keeping
// it: a line whose account may read no build queue (deleted after the line
// was made) is MSHP3, a line replaced by a newer `mesh builder add`
// is MSHP2; neither keeps a credential.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { runAny } from '../../src/sys/proc.js';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { MESH_BUILDER } from './helpers.js';

const E = suite<{ mesh: Mesh; dir: string }>('mesh-builder enrol refuses a line the broker does not take');
E.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.dir = mkdtempSync(join(tmpdir(), 'mesh-builder-enrol-'));
});
E.after(async (ctx) => {
  await ctx.mesh?.stop();
  rmSync(ctx.dir, { recursive: true, force: true });
});

async function line(mesh: Mesh, name: string): Promise<string> {
  const added = await mesh.cli(['builder', 'add', name, '--json']);
  assert.is(added.code, 0, added.stderr);
  return JSON.parse(added.stdout).line as string;
}
const enrol = (dir: string, text: string) =>
  runAny(process.execPath, [MESH_BUILDER, 'enrol'], {
    env: { PATH: process.env.PATH, MESH_BUILDER_DIR: dir },
    input: text,
    timeoutMs: 60_000,
  });
const refused = (r: { code: number; stderr: string }, code: string): string => {
  assert.is(r.code, 1, r.stderr);
  assert.ok(r.stderr.trimEnd().endsWith(`(${code}).`), r.stderr);
  return r.stderr;
};

E('a line whose account may read no build queue is refused with MSHP3, and nothing is kept', async ({ mesh, dir }) => {
  const d = join(dir, 'p3');
  const text = await line(mesh, 'b3');
  assert.is((await mesh.mgmt('DELETE', `/queues/${encodeURIComponent(mesh.vhost)}/mesh.build`)).status, 204);
  assert.match(
    refused(await enrol(d, text), 'MSHP3'),
    /the broker has no mesh\.build queue this account may read: run mesh builder add b3 on the control plane again/,
  );
  assert.not.ok(existsSync(join(d, 'credential.json')), 'no credential was kept');
});

E('a line replaced by a newer builder add is refused with MSHP2, and nothing is kept', async ({ mesh, dir }) => {
  const d = join(dir, 'p2');
  const old = await line(mesh, 'b2');
  await line(mesh, 'b2');
  assert.match(
    refused(await enrol(d, old), 'MSHP2'),
    /the broker refused builder b2's account: the line was replaced: mesh builder add b2 again makes a new one/,
  );
  assert.not.ok(existsSync(join(d, 'credential.json')), 'no credential was kept');
});

E.run();
