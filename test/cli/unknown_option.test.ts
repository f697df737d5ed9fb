// A mistyped option is refused, not ignored, in all three CLIs: sade alone
// accepted `mesh token issue b3 --stie b` and issued a token without a site.
// The refusal names the options the command does have, and nothing runs.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { freshMesh, runCli, MESH, MESH_HOST, type Mesh } from '../harness/mesh.js';

const MESH_BUILDER = fileURLToPath(new URL('../../src/builder/cli.js', import.meta.url));

const U = suite<{ mesh: Mesh; dir: string }>('unknown options are refused with the valid ones');

U.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.dir = mkdtempSync(join(tmpdir(), 'mesh-cli-'));
});
U.after(async (ctx) => {
  await ctx.mesh.stop();
  rmSync(ctx.dir, { recursive: true, force: true });
});

U('mesh token issue x --stie b exits non-zero, names --site, and issues no token', async ({ mesh }) => {
  const r = await mesh.cli(['token', 'issue', 'x', '--stie', 'b']);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /^mesh: mesh token issue has no option --stie: its options are .*--site/);
  assert.match(r.stderr, /--ttl.* \(MSHJ6\)\.\n$/);
  assert.is(r.code, 2, 'the exit code of a usage error');
  assert.is(r.stdout, '', 'no token line');
  const [row] = await mesh.store
    .admin`select (select count(*) from inventory.token)::int as tokens, (select count(*) from inventory.node)::int as nodes`;
  assert.equal(row, { tokens: 0, nodes: 0 }, 'nothing was issued');
  // The same line spelled right does issue: the refusal is the option, not the command.
  const ok = await mesh.cli(['token', 'issue', 'x', '--site', 'b']);
  assert.is(ok.code, 0, ok.stderr);
});

U('mesh-host refuses an unknown option before it enrols', async ({ dir }) => {
  const r = await runCli(MESH_HOST, ['enrol', '--jsn'], { ...process.env, MESH_HOST_DIR: dir }, 'not-a-token');
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /^mesh-host: mesh-host enrol has no option --jsn: its options are --json, --help/);
  assert.not.ok(existsSync(join(dir, 'identity.json')), 'no identity');
});

U('mesh-builder refuses an unknown option before it runs', async ({ dir }) => {
  const r = await runCli(MESH_BUILDER, ['run', '--registry', '127.0.0.1:5000'], {
    ...process.env,
    MESH_BUILDER_DIR: dir,
  });
  assert.is.not(r.code, 0);
  assert.match(
    r.stderr,
    /^mesh-builder: mesh-builder run has no option --registry: its options are --help .*\(MSHJ6\)\.\n$/,
  );
});

U('mesh --help lists the commands grouped by noun, each group sorted', async ({ mesh }) => {
  const r = await runCli(MESH, ['--help'], mesh.env);
  assert.is(r.code, 0);
  const section = r.stdout.split('  Commands\n')[1]!.split('\n\n')[0]!.split('\n');
  const groups = section.filter((l) => /^ {4}[a-z][a-z ]*$/.test(l)).map((l) => l.trim());
  for (const noun of ['node', 'token', 'module', 'overlay', 'secret', 'provision', 'build'])
    assert.ok(groups.includes(noun), `a ${noun} group`);
  assert.equal(groups, [...groups].sort(), 'groups sorted');
  const secret = section
    .slice(section.indexOf('    secret') + 1)
    .filter((_, i, all) => all.slice(0, i + 1).every((l) => l.startsWith('      ')))
    .map((l) => l.trim().split(/\s+/).slice(0, 3).join(' '));
  assert.equal(secret, [...secret].sort(), 'commands sorted within the group');
  assert.ok(
    secret.every((c) => c.startsWith('mesh secret ')),
    'only secret commands under secret',
  );
  assert.ok(secret.length >= 5, 'the secret commands are under secret');
});

U.run();
