// Broker nodes' openings (X2; sql/assignment/0021, overlay 0009):
// a node named in inventory.broker_nodes.node admits its broker's TLS port
// from anywhere, and epmd and the Erlang distribution from the other broker
// nodes' overlay addresses alone, over the overlay; a node that runs no
// broker opens none of them; each opening says why in `mesh firewall show`.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freshMesh, type Mesh } from '../harness/mesh.js';
import { cli } from '../declare/helpers.js';
import { threeSites, firewallOf, rule, address } from './fleet.js';

interface Ctx {
  mesh: Mesh;
  dir: string;
}
const B = suite<Ctx>('broker nodes in the firewall (X2)');
const EPMD = 4373;
const DIST = 25673;
const fp = () => [...randomBytes(32)].map((b) => b.toString(16).padStart(2, '0').toUpperCase()).join(':');

B.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.dir = mkdtempSync(join(tmpdir(), 'fw-broker-'));
  await threeSites(ctx.mesh);
});
B.after(async (ctx) => {
  await ctx.mesh.stop();
});

async function refusedWith(p: Promise<unknown>, code: string): Promise<void> {
  try {
    await p;
  } catch (err) {
    assert.is((err as { code?: string }).code, code);
    return;
  }
  assert.unreachable(`not refused (${code} expected)`);
}

B('no broker node recorded: no node opens epmd, the distribution or a broker port', async (ctx) => {
  for (const n of ['hub', 'b1', 'b2', 'c1']) {
    const fw = await firewallOf(ctx.mesh, n);
    assert.equal([...rule(fw, EPMD), ...rule(fw, DIST), ...rule(fw, 5671)], [], n);
  }
});

B('one broker node opens TLS from anywhere, and no Erlang traffic while it has no other broker node', async (ctx) => {
  await cli(ctx.mesh, 'broker', 'add', 'hub.example.net:5671', '--fingerprint', fp(), '--node', 'hub');
  const hub = await firewallOf(ctx.mesh, 'hub');
  assert.equal(rule(hub, 5671), [{ proto: 'tcp', port: 5671, why: 'broker, TLS' }]);
  assert.equal([...rule(hub, EPMD), ...rule(hub, DIST)], [], 'nobody to admit yet: the rules are left out');
  for (const n of ['b1', 'b2', 'c1']) assert.equal(rule(await firewallOf(ctx.mesh, n), 5671), [], n);
});

B(
  'X2: epmd and the distribution are admitted between broker nodes only, over the overlay, each from the others',
  async (ctx) => {
    await cli(ctx.mesh, 'broker', 'add', 'b1.example.net:5671', '--fingerprint', fp(), '--node', 'b1');
    const [hubA, b1A, b2A] = [
      await address(ctx.mesh, 'hub'),
      await address(ctx.mesh, 'b1'),
      await address(ctx.mesh, 'b2'),
    ];
    const hub = await firewallOf(ctx.mesh, 'hub');
    assert.equal(rule(hub, EPMD), [
      { proto: 'tcp', port: EPMD, from: [b1A], via: 'mesh0', why: 'broker cluster: epmd' },
    ]);
    assert.equal(rule(hub, DIST), [
      { proto: 'tcp', port: DIST, from: [b1A], via: 'mesh0', why: 'broker cluster: Erlang distribution' },
    ]);
    const b1 = await firewallOf(ctx.mesh, 'b1');
    assert.equal(rule(b1, EPMD)[0]!.from, [hubA]);
    assert.equal(rule(b1, DIST)[0]!.from, [hubA]);
    assert.equal(
      rule(b1, 5671),
      [{ proto: 'tcp', port: 5671, why: 'broker, TLS' }],
      'nodes dial the new broker node from anywhere',
    );
    for (const n of ['b2', 'c1']) {
      const fw = await firewallOf(ctx.mesh, n);
      assert.equal([...rule(fw, EPMD), ...rule(fw, DIST), ...rule(fw, 5671)], [], `${n} runs no broker`);
    }
    // A third: each admits the other two, never itself, never a node that runs no broker.
    await cli(ctx.mesh, 'broker', 'add', 'b2.example.net:5671', '--fingerprint', fp(), '--node', 'b2');
    assert.equal(rule(await firewallOf(ctx.mesh, 'hub'), EPMD)[0]!.from, [b1A, b2A].sort());
    assert.equal(rule(await firewallOf(ctx.mesh, 'b2'), DIST)[0]!.from, [hubA, b1A].sort());
    assert.equal(rule(await firewallOf(ctx.mesh, 'c1'), EPMD), []);
  },
);

B('mesh firewall show says why each broker opening exists', async (ctx) => {
  const shown = JSON.parse(await cli(ctx.mesh, 'firewall', 'show', 'b1', '--json')) as {
    openings: { port: number; origin: string; reason: string }[];
  };
  const broker = shown.openings
    .filter((o) => o.origin === 'broker')
    .map((o) => `${o.port} ${o.reason}`)
    .sort();
  assert.equal(broker, [
    `${DIST} broker cluster: Erlang distribution from the other broker nodes (b2, hub) over the overlay`,
    `${EPMD} broker cluster: epmd from the other broker nodes (b2, hub) over the overlay`,
    '5671 broker node b1.example.net:5671: every node may dial its broker over TLS (inventory.broker_nodes)',
  ]);
});

B("the first node's own broker module opening is not doubled by its broker node row", async (ctx) => {
  const f = join(ctx.dir, 'mesh-broker.json');
  writeFileSync(
    f,
    JSON.stringify({
      name: 'mesh-broker',
      resources: [{ kind: 'opening', name: 'broker', proto: 'tcp', port: 5671, from: 'any', why: 'broker, TLS' }],
    }),
  );
  await cli(ctx.mesh, 'module', 'add', f);
  await cli(ctx.mesh, 'assign', 'mesh-broker', 'hub');
  assert.is(rule(await firewallOf(ctx.mesh, 'hub'), 5671).length, 1);
});

B('the ports follow overlay.set_broker_ports, which refuses anything but two different ports (MSH66)', async (ctx) => {
  for (const [e, d] of [
    [0, DIST],
    [EPMD, 65536],
    [EPMD, EPMD],
    [-1, 1],
  ]) {
    await refusedWith(ctx.mesh.store.admin`select * from overlay.set_broker_ports(${e}::int, ${d}::int)`, 'MSH66');
  }
  await ctx.mesh.store.admin`select * from overlay.set_broker_ports(4400, 25700)`;
  const hub = await firewallOf(ctx.mesh, 'hub');
  assert.equal([...rule(hub, EPMD), ...rule(hub, DIST)], []);
  assert.is(rule(hub, 4400).length, 1);
  assert.is(rule(hub, 25700).length, 1);
  await ctx.mesh.store.admin`select * from overlay.set_broker_ports(${EPMD}::int, ${DIST}::int)`;
});

B('a broker removed, or run outside the mesh (no node), opens nothing on any node', async (ctx) => {
  await cli(ctx.mesh, 'broker', 'remove', 'b2.example.net:5671');
  assert.equal([...rule(await firewallOf(ctx.mesh, 'b2'), EPMD), ...rule(await firewallOf(ctx.mesh, 'b2'), 5671)], []);
  assert.equal(rule(await firewallOf(ctx.mesh, 'hub'), EPMD)[0]!.from, [await address(ctx.mesh, 'b1')]);
  await cli(ctx.mesh, 'broker', 'add', 'mq.example.org:5671', '--fingerprint', fp());
  assert.equal(rule(await firewallOf(ctx.mesh, 'hub'), EPMD)[0]!.from, [await address(ctx.mesh, 'b1')]);
  assert.equal(rule(await firewallOf(ctx.mesh, 'c1'), 5671), []);
});

B.run();
