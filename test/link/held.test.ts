// A held link on the shared broker: the backoff starts again from the bottom
// only once a connection has held (L1), and the node says it is there every
// MESH_HOST_HEARD_SECONDS, not mandatory and silent in both logs (R3).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { addModule, cli, b64, root, until } from '../declare/helpers.js';
import { lines } from './fake_broker.js';

interface Ctx {
  mesh: Mesh;
  serve: Proc;
  root: string;
}
const H = suite<Ctx>('held link (L1, R3)');

H.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  ctx.root = root();
});
H.after(async (ctx) => {
  await ctx.mesh.stop();
  rmSync(ctx.root, { recursive: true, force: true });
});

const connections = async (mesh: Mesh, node: string) =>
  ((await (await mesh.mgmt('GET', '/connections')).json()) as { user: string; name: string }[])
    .filter((c) => c.user === `${mesh.prefix}node.${node}`)
    .map((c) => c.name);

/** Close the node's connection from the broker's side, as a broker restart or a dead route does. */
async function dropFromBroker(mesh: Mesh, node: string): Promise<void> {
  const [name] = await until(`${node}'s connection listed`, async () => {
    const c = await connections(mesh, node);
    return c.length === 1 && c;
  });
  const r = await mesh.mgmt('DELETE', `/connections/${encodeURIComponent(name!)}`);
  assert.is(r.status, 204);
}

const waitAfter = async (p: Proc, mark: number) =>
  Number((await p.waitFor(/next attempt in ([\d.]+)s/, 20_000, mark))[1]);

H(
  'a connection lost before it held climbs the backoff; one that held starts it again from the bottom (L1)',
  async (ctx) => {
    const { proc } = await ctx.mesh.joined('flap1', {
      MESH_HOST_BACKOFF_MIN_SECONDS: '0.5',
      MESH_HOST_BACKOFF_MAX_SECONDS: '60',
      MESH_HOST_BACKOFF_RESET_SECONDS: '6',
      // The plain doubling: the test names each wait.
      MESH_HOST_BACKOFF_JITTER: 'none',
    });
    let mark = proc.output().length;
    await dropFromBroker(ctx.mesh, 'flap1');
    assert.match(await proc.waitFor(/lost the broker \((.+)\)/, 10_000, mark).then((m) => m[1]!), /CONNECTION.FORCED/);
    assert.is(await waitAfter(proc, mark), 0.5);
    await proc.waitFor(/connected to /, 10_000, mark);
    // Dropped again at once, well before the 6 s it must hold.
    mark = proc.output().length;
    await dropFromBroker(ctx.mesh, 'flap1');
    assert.is(await waitAfter(proc, mark), 1, 'a connection that did not hold does not reset');
    await proc.waitFor(/connected to /, 10_000, mark);
    mark = proc.output().length;
    await dropFromBroker(ctx.mesh, 'flap1');
    assert.is(await waitAfter(proc, mark), 2);
    await proc.waitFor(/connected to /, 10_000, mark);
    // Now it holds past the reset time.
    await new Promise((r) => setTimeout(r, 6_500));
    mark = proc.output().length;
    await dropFromBroker(ctx.mesh, 'flap1');
    assert.is(await waitAfter(proc, mark), 0.5, 'a connection that held resets');
    await proc.waitFor(/connected to /, 10_000, mark);
    await proc.stop();
  },
);

H('heard every MESH_HOST_HEARD_SECONDS moves last_seen, and neither log says so (R3)', async (ctx) => {
  const { proc } = await ctx.mesh.joined('quiet1', { MESH_HOST_HEARD_SECONDS: '1' });
  for (let i = 0; i < 3; i++) {
    // Each time back, only a heard since then makes the node 'here' again.
    await ctx.mesh.store
      .admin`update inventory.node set last_seen = now() - interval '10 minutes' where name = 'quiet1'`;
    await until(
      'heard again',
      async () =>
        (await ctx.mesh.store.admin`select state from inventory.node_status where name = 'quiet1'`)[0]!.state ===
        'here',
      15_000,
    );
  }
  assert.equal(lines(ctx.serve.output(), /heard/i), [], 'serve is silent about heard');
  assert.equal(lines(proc.output(), /heard/i), [], 'the host is silent about heard');
  await proc.stop();
});

H(
  'heard is not mandatory: with nothing bound to receive it, nothing comes back and nothing is said (R3)',
  async (ctx) => {
    const { proc } = await ctx.mesh.joined('quiet2', {
      MESH_HOST_ROOTS: ctx.root,
      MESH_HOST_HEARD_SECONDS: '3600',
      MESH_HOST_RECONCILE_SECONDS: '3600',
    });
    const ctrl = `/bindings/${ctx.mesh.vhost}/e/mesh/q/mesh.control`;
    assert.is((await ctx.mesh.mgmt('DELETE', `${ctrl}/heard`)).status, 204);
    try {
      // A fresh connection says heard first, then applies and reports: the
      // broker answers a channel's publishes in order, so by the time the
      // report is recorded a returned heard would have come back and been said.
      const mark = proc.output().length;
      proc.child.kill('SIGUSR1');
      await proc.waitFor(/connected to /, 10_000, mark);
      await addModule(ctx.mesh, 'q2', [
        { kind: 'file', path: join(ctx.root, 'q2.conf'), content: b64('x'), mode: '0644' },
      ]);
      await cli(ctx.mesh, 'assign', 'q2', 'quiet2');
      await until(
        'report recorded',
        async () =>
          (await ctx.mesh.store.admin`select 1 from inventory.report where node = 'quiet2' and serial = 1`).length > 0,
      );
      assert.not.match(proc.output().slice(mark), /could not route/);
    } finally {
      await ctx.mesh.mgmt('POST', ctrl, { routing_key: 'heard' });
    }
    await proc.stop();
  },
);

H.run();
