// `mesh broker add|list|remove` and W2: a broker added, removed
// or given a new certificate changes every node's composition, so the command
// itself owes every node a declaration (rows in the outbox, W1) and says so;
// a command that changes nothing owes none. While no broker is recorded, no
// composition carries one: an existing mesh is left byte for byte as it was.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { insertNodes } from '../bench/lib.js';
import { cli } from '../declare/helpers.js';

const B = suite<{ mesh: Mesh; nodes: string[] }>('mesh broker (W2)');
const fp = (seed: string) => createHash('sha256').update(seed).digest('hex').toUpperCase().match(/../g)!.join(':');
/** Declarations owed and not yet delivered, per node (no serve runs here: nothing is delivered). */
const owed = async (mesh: Mesh) =>
  (
    await mesh.store
      .admin`select node, count(*)::int as n from assignment.outbox where delivered_at is null group by node order by node`
  ).map((r) => `${r.node}:${r.n}`);
const acknowledgeAll = (mesh: Mesh) =>
  mesh.store.admin`update assignment.declaration set acknowledged_at = now() where acknowledged_at is null`;
const brokersOf = async (mesh: Mesh, node: string) =>
  (
    JSON.parse(await cli(mesh, 'plan', node, '--json')) as { resources: { kind: string; brokers?: unknown }[] }
  ).resources.filter((r) => r.kind === 'brokers');

B.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.nodes = await insertNodes(ctx.mesh, 3);
  await cli(ctx.mesh, 'declare', '--all');
  await acknowledgeAll(ctx.mesh);
});
B.after(async (ctx) => {
  await ctx.mesh?.stop();
});

B("with none recorded the home's broker is the list, and no composition carries one", async ({ mesh, nodes }) => {
  const list = JSON.parse(await cli(mesh, 'broker', 'list', '--json'));
  assert.equal(list, [
    { address: mesh.broker.public, fingerprint: mesh.broker.fingerprint, node: null, added_at: null, recorded: false },
  ]);
  assert.match(await cli(mesh, 'broker', 'list'), /home \(only broker\)/);
  assert.equal(await brokersOf(mesh, nodes[0]!), []);
  assert.match(await cli(mesh, 'plan'), /every node's composition is declared/);
});

B(
  "W2: the first add records the home's broker too, says so, and owes every node a declaration carrying both",
  async ({ mesh, nodes }) => {
    const before = (await owed(mesh)).length;
    const out = await cli(mesh, 'broker', 'add', 'mq2.example.net:5671', '--fingerprint', fp('mq2').toLowerCase());
    assert.match(
      out,
      new RegExp(
        `recorded the home's own broker ${mesh.broker.public.replace(/\./g, '\\.')} .* so the list is complete`,
      ),
    );
    assert.match(out, /added broker mq2\.example\.net:5671/);
    assert.match(out, new RegExp(`re-declaring ${nodes.join(', ')}`));
    assert.is(before, 3);
    assert.equal(
      await owed(mesh),
      nodes.map((n) => `${n}:2`),
      'one more declaration owed to every node',
    );
    const want = [
      {
        id: 'brokers',
        kind: 'brokers',
        brokers: [
          { address: mesh.broker.public, fingerprint: mesh.broker.fingerprint },
          { address: 'mq2.example.net:5671', fingerprint: fp('mq2') },
        ].sort((a, b) => (a.address < b.address ? -1 : 1)),
      },
    ];
    for (const n of nodes) assert.equal(await brokersOf(mesh, n), want, n);
    await acknowledgeAll(mesh);
    const list = JSON.parse(await cli(mesh, 'broker', 'list', '--json')) as { address: string; recorded: boolean }[];
    assert.equal(
      list.map((b) => [b.address, b.recorded]).sort(),
      [
        [mesh.broker.public, true],
        ['mq2.example.net:5671', true],
      ].sort(),
    );
  },
);

B('W2: the same add again changes nothing and owes nothing', async ({ mesh }) => {
  const out = await cli(mesh, 'broker', 'add', 'mq2.example.net:5671', '--fingerprint', fp('mq2'));
  assert.match(out, /already known as given\nno node's composition changed: nothing to re-declare/);
  assert.equal(await owed(mesh), ['b000001:2', 'b000002:2', 'b000003:2']);
});

B('W2: a new certificate is a change declared to every node, and plan --all shows it', async ({ mesh, nodes }) => {
  const out = await cli(mesh, 'broker', 'add', 'mq2.example.net:5671', '--fingerprint', fp('mq2-renewed'));
  assert.match(out, /changed broker mq2\.example\.net:5671: fingerprint/);
  assert.equal(
    await owed(mesh),
    nodes.map((n) => `${n}:3`),
  );
  // Owed, not yet applied: what they would change against what they run.
  await mesh.store
    .admin`update assignment.declaration set acknowledged_at = null where acknowledged_at is not null and serial = (select max(serial) from assignment.declaration)`;
  assert.match(await cli(mesh, 'plan', '--all'), /3 nodes: brokers changed/);
  await acknowledgeAll(mesh);
});

B(
  'refusals name the remedy and their code: malformed address (MSH10), fingerprint (MSH11), a node not enrolled (MSH13), unknown (MSH14), the last (MSH12)',
  async ({ mesh }) => {
    const refused = async (args: string[], code: string, said: RegExp) => {
      const r = await mesh.cli(args);
      assert.is(r.code, 1, r.stdout);
      assert.match(r.stderr, new RegExp(`\\(${code}\\)`));
      assert.match(r.stderr, said);
    };
    await refused(['broker', 'add', 'mq3', '--fingerprint', fp('x')], 'MSH10', /not HOST:PORT/);
    await refused(
      ['broker', 'add', 'mq3:5671', '--fingerprint', 'AB:CD'],
      'MSH11',
      /openssl x509 -noout -fingerprint -sha256/,
    );
    await refused(
      ['broker', 'add', 'mq3:5671', '--fingerprint', fp('x'), '--node', 'nobody'],
      'MSH13',
      /mesh node list/,
    );
    await refused(['broker', 'remove', 'mq9:5671'], 'MSH14', /mesh broker list/);
    const r = await mesh.cli(['broker', 'add', 'mq3:5671']);
    assert.is(r.code, 1);
    assert.match(r.stderr, /--fingerprint FP/);
    await cli(mesh, 'broker', 'remove', mesh.broker.public);
    await refused(['broker', 'remove', 'mq2.example.net:5671'], 'MSH12', /add the broker that replaces it first/);
    assert.equal(await owed(mesh), ['b000001:4', 'b000002:4', 'b000003:4'], 'only the one removal owed anything');
  },
);

B('--node names the enrolled node running it', async ({ mesh, nodes }) => {
  const out = JSON.parse(
    await cli(mesh, 'broker', 'add', 'mq4.example.net:5671', '--fingerprint', fp('mq4'), '--node', nodes[1]!, '--json'),
  );
  assert.is(out.outcome, 'added');
  assert.is(out.node, nodes[1]);
  assert.is(out.redeclared.length, 3);
  const list = JSON.parse(await cli(mesh, 'broker', 'list', '--json')) as { address: string; node: string | null }[];
  assert.equal(
    list.map((b) => [b.address, b.node]),
    [
      ['mq2.example.net:5671', null],
      ['mq4.example.net:5671', nodes[1]],
    ],
  );
});

B.run();
