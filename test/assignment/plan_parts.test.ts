// `mesh plan --all` on a fleet large enough to be composed in parts
// (src/assignment/plan_all.ts, as `declare --all` splits it): the parts'
// groups merged read as one plan of the whole fleet. One change on every
// node is one line, its sample the first five names of the fleet, not of a
// part; a node's own change in the last part is its own line; --json holds
// every node once, in order.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { insertNodes } from '../bench/lib.js';
import { addModule, cli } from '../declare/helpers.js';
import { b64 } from '../../src/crypto/keys.js';
import { MIN_NODES_PER_PART } from '../../src/assignment/compose_parts.js';

const P = suite<{ mesh: Mesh }>('plan --all in parts');
// Enough for two parts; the last node sits in the second.
const N = 2 * MIN_NODES_PER_PART + 10;
const LAST = `b${String(N).padStart(6, '0')}`;
const CONF = '/srv/plan/web.conf';
const web = (v: string) => [{ kind: 'file', path: CONF, content: b64(Buffer.from(v)), mode: '0644' }];

P.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  await insertNodes(ctx.mesh, N);
  await addModule(ctx.mesh, 'web', web('v1'));
  await ctx.mesh.store.admin`insert into assignment.assignment (module, node) select 'web', name from inventory.node`;
  await cli(ctx.mesh, 'declare', '--all');
  await ctx.mesh.store.admin`update assignment.declaration set acknowledged_at = now()`;
});
P.after(async (ctx) => {
  await ctx.mesh?.stop();
});

P(
  "the parts' groups merged: one line a change, the fleet's first five named, every node once in --json",
  async (ctx) => {
    await addModule(ctx.mesh, 'web', web('v2'));
    await addModule(ctx.mesh, 'extra', [
      { kind: 'file', path: '/srv/plan/extra', content: b64(Buffer.from('x')), mode: '0644' },
    ]);
    await cli(ctx.mesh, 'assign', 'extra', LAST);
    assert.is(
      await cli(ctx.mesh, 'plan', '--all'),
      [
        `${(N - 1).toLocaleString('en')} nodes: file:${CONF} changed (b000001, b000002, b000003, b000004, b000005, ...)`,
        `1 node: file:/srv/plan/extra added, file:${CONF} changed (${LAST})`,
      ].join('\n') + '\n',
    );
    const nodes = JSON.parse(await cli(ctx.mesh, 'plan', '--all', '--json')) as { node: string }[];
    assert.equal(
      nodes.map((n) => n.node),
      Array.from({ length: N }, (_, i) => `b${String(i + 1).padStart(6, '0')}`),
    );
  },
);

P.run();
