// `mesh plan --all`: what the next declarations change on every
// node against the one it last acknowledged, with the services that restart
// because of it, nodes with the same changes on one line; --json per node.
// Nodes are rows (nothing here crosses the broker): a node "applies" when
// its newest declaration is marked acknowledged, as serve does on its report.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { insertNodes } from '../bench/lib.js';
import { addModule, cli } from '../declare/helpers.js';
import { b64 } from '../../src/crypto/keys.js';

const P = suite<{ mesh: Mesh }>('plan --all');
const CONF = '/srv/plan/web.conf';
const web = (v: string) => [
  { kind: 'file', path: CONF, content: b64(Buffer.from(v)), mode: '0644' },
  { kind: 'service', name: 'web', exec: ['/bin/sleep', '1000'], restartOn: [`file:${CONF}`] },
];
const acknowledgeAll = (mesh: Mesh) =>
  mesh.store.admin`update assignment.declaration set acknowledged_at = now() where acknowledged_at is null`;
const plan = (mesh: Mesh) => cli(mesh, 'plan', '--all');

P.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  await insertNodes(ctx.mesh, 3);
  await addModule(ctx.mesh, 'web', web('v1'));
  for (const n of ['b000001', 'b000002', 'b000003']) await cli(ctx.mesh, 'assign', 'web', n);
});
P.after(async (ctx) => {
  await ctx.mesh?.stop();
});

P('never acknowledged: everything is added; once applied, nothing would change', async (ctx) => {
  assert.is(
    await plan(ctx.mesh),
    `3 nodes: file:${CONF} added, firewall:mesh added, service:web added (b000001, b000002, b000003)\n`,
  );
  await acknowledgeAll(ctx.mesh);
  assert.is(await plan(ctx.mesh), 'every node runs its next declaration already: nothing would change\n');
});

P(
  'a changed file reads as one line for every node it reaches, with the service its restartOn restarts',
  async (ctx) => {
    await addModule(ctx.mesh, 'web', web('v2'));
    assert.is(
      await plan(ctx.mesh),
      `3 nodes: file:${CONF} changed, service:web restarts (b000001, b000002, b000003)\n`,
    );
  },
);

P(
  "nodes with different changes are different lines (most nodes first, then by their changes); --json says each node's",
  async (ctx) => {
    await addModule(ctx.mesh, 'extra', [
      { kind: 'file', path: '/srv/plan/extra', content: b64(Buffer.from('x')), mode: '0644' },
    ]);
    await cli(ctx.mesh, 'assign', 'extra', 'b000003');
    await cli(ctx.mesh, 'unassign', 'web', 'b000002');
    assert.is(
      await plan(ctx.mesh),
      [
        `1 node: file:/srv/plan/extra added, file:${CONF} changed, service:web restarts (b000003)`,
        `1 node: file:${CONF} changed, service:web restarts (b000001)`,
        `1 node: file:${CONF} removed, service:web removed (b000002)`,
      ].join('\n') + '\n',
    );
    const nodes = JSON.parse(await cli(ctx.mesh, 'plan', '--all', '--json')) as {
      node: string;
      changes: { id: string; change: string }[];
    }[];
    assert.equal(nodes.find((n) => n.node === 'b000003')!.changes, [
      { id: 'file:/srv/plan/extra', change: 'added' },
      { id: `file:${CONF}`, change: 'changed' },
      { id: 'service:web', change: 'restarts' },
    ]);
    // A service changed itself starts again as that, not "restarts" because of its file.
    await addModule(ctx.mesh, 'web', [web('v3')[0], { ...web('v3')[1], exec: ['/bin/sleep', '2000'] }]);
    const again = JSON.parse(await cli(ctx.mesh, 'plan', '--all', '--json')) as {
      node: string;
      changes: { id: string; change: string }[];
    }[];
    assert.equal(again.find((n) => n.node === 'b000001')!.changes, [
      { id: `file:${CONF}`, change: 'changed' },
      { id: 'service:web', change: 'changed' },
    ]);
  },
);

P('--all with a node is refused', async (ctx) => {
  const r = await ctx.mesh.cli(['plan', 'b000001', '--all']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /name a node or give --all, not both/);
});

P.run();
