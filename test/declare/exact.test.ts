// W2 for a module's content: `mesh module add` composes only the nodes the
// module is placed on, not the fleet. A node whose composition changed by
// another way (here a module changed in SQL with no command after it) is not
// this change's to declare: a module add leaves it, and `declare --all
// --changed` still finds it. Nodes are recorded as enrolment leaves them (no
// broker account or queue: what is owed stays owed).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { b64, cli } from './helpers.js';

interface Ctx {
  mesh: Mesh;
}
const Exact = suite<Ctx>("a module change composes the module's nodes alone (W2)");

Exact.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  for (const n of ['n1', 'n2', 'n3', 'n4'])
    await ctx.mesh.store
      .admin`insert into inventory.node (name, site, identity_key, overlay_key, sealing_key, enrolled_at)
                               values (${n}, 'default', ${randomBytes(32)}, ${randomBytes(32)}, ${randomBytes(32)}, clock_timestamp())`;
});
Exact.after(async (ctx) => {
  await ctx.mesh.stop();
});

const file = (name: string, content: string) => ({
  kind: 'file',
  path: `/srv/${name}.conf`,
  content: b64(content),
  mode: '0644',
});

function moduleFile(ctx: Ctx, name: string, content: string): string {
  const f = join(ctx.mesh.home, `${name}.json`);
  writeFileSync(f, JSON.stringify({ name, resources: [file(name, content)] }));
  return f;
}

const nodes = (out: string) => (JSON.parse(out) as { redeclared: { node: string }[] }).redeclared.map((d) => d.node);

Exact('W2: a module add declares the nodes it is placed on that changed, composing no other', async (ctx) => {
  await cli(ctx.mesh, 'module', 'add', moduleFile(ctx, 'm1', 'one'));
  await cli(ctx.mesh, 'module', 'add', moduleFile(ctx, 'm2', 'one'));
  for (const [m, n] of [
    ['m1', 'n1'],
    ['m1', 'n2'],
    ['m2', 'n3'],
  ])
    await cli(ctx.mesh, 'assign', m!, n!);
  await cli(ctx.mesh, 'declare', '--all');
  // m2 changed with no W2 step after it: n3's composition differs from its declaration.
  await ctx.mesh.store.admin`select catalogue.put_module('m2', ${ctx.mesh.store.admin.json([
    { id: 'file:/srv/m2.conf', ...file('m2', 'two') },
  ] as never)}, 'handed')`;
  assert.equal(nodes(await cli(ctx.mesh, 'module', 'add', moduleFile(ctx, 'm1', 'two'), '--json')), ['n1', 'n2']);
  assert.equal(
    nodes(await cli(ctx.mesh, 'module', 'add', moduleFile(ctx, 'm1', 'two'), '--json')),
    [],
    'the same content again changes nothing',
  );
  assert.equal(
    (JSON.parse(await cli(ctx.mesh, 'declare', '--all', '--changed', '--json')) as { node: string }[]).map(
      (d) => d.node,
    ),
    ['n3'],
    'the fleet-wide step still finds the change no command declared',
  );
});

Exact.run();
