// Q1: a promise is checked in the transaction of the change. A change by
// module add, assign, overlay hub and provision revoke that would break one is
// refused with MSHQ1 naming the promise and the change, and nothing is
// committed or owed (the outbox and the declarations counted before and
// after); the same command passes once the promise is removed. Nodes are
// rows (nothing here crosses the broker).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { freshMesh, type Mesh, type CliResult } from '../harness/mesh.js';
import { addModule, cli } from '../declare/helpers.js';
import { createQueues } from '../bench/lib.js';
import { b64 } from '../../src/crypto/keys.js';

const P = suite<{ mesh: Mesh }>('promises (Q1)');

const refused = (r: CliResult, code: string) => {
  assert.is(r.code, 1, `expected ${code}, got exit ${r.code}: ${r.stdout}${r.stderr}`);
  assert.match(r.stderr, new RegExp(`\\(${code}\\)`));
  return r.stderr;
};
const counts = async (mesh: Mesh) => {
  const [c] = await mesh.store.admin`select (select count(*) from assignment.outbox)::int as outbox,
                                            (select count(*) from assignment.declaration)::int as declarations,
                                            (select count(*) from assignment.node_serial)::int as serials`;
  return c!;
};
const service = (name: string) => ({ kind: 'service', name, exec: ['/bin/sleep', '1000'] });
const opening = (port: number) => ({ kind: 'opening', name: `p${port}`, proto: 'tcp', port, from: 'any' });
const state = async (mesh: Mesh) =>
  Object.fromEntries(
    (JSON.parse(await cli(mesh, 'promise', 'list', '--json')) as { name: string; state: string }[]).map((p) => [
      p.name,
      p.state,
    ]),
  );

P.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  // Two dialable hubs at site core, a web node at site dmz, a database node at core.
  await ctx.mesh.store.admin`
    insert into inventory.node (name, site, dialable, identity_key, overlay_key, sealing_key, enrolled_at)
    select n, s, d, k, k, k, now()
      from (values ('h1', 'core', 'h1.test:51820'), ('h2', 'core', 'h2.test:51820'),
                   ('web1', 'dmz', null), ('db1', 'core', null)) v(n, s, d),
           lateral (select decode(md5(n) || md5('k' || n), 'hex') as k) x`;
  // A grant is told to both ends at once (S5): every node has its queue.
  await createQueues(ctx.mesh, ['h1', 'h2', 'web1', 'db1']);
  await cli(ctx.mesh, 'overlay', 'hub', 'h1');
  await cli(ctx.mesh, 'overlay', 'hub', 'h2');
  await addModule(ctx.mesh, 'edge', [
    { kind: 'file', path: '/srv/edge.conf', content: b64(Buffer.from('e')), mode: '0644' },
  ]);
  await addModule(ctx.mesh, 'nginx', [service('nginx')]);
  await addModule(ctx.mesh, 'web', [
    { kind: 'file', path: '/srv/web.conf', content: b64(Buffer.from('w')), mode: '0644' },
  ]);
  await addModule(ctx.mesh, 'pg', [service('pgserver')]);
  await cli(ctx.mesh, 'assign', 'edge', 'web1');
  await cli(ctx.mesh, 'assign', 'nginx', 'web1');
  await cli(ctx.mesh, 'assign', 'web', 'web1');
  await cli(ctx.mesh, 'assign', 'pg', 'db1');
  await cli(
    ctx.mesh,
    'provision',
    'offer',
    'appdb',
    '--kind',
    'postgres',
    '--provider',
    'pg',
    '--host',
    'db1.mesh',
    '--port',
    '5433',
  );
  await cli(ctx.mesh, 'provision', 'grant', 'appdb', 'web', '--database', 'web');
});
P.after(async (ctx) => {
  await ctx.mesh?.stop();
});

P(
  'promises are added kept, listed with their state; malformed, taken, broken and unknown ones are refused',
  async (ctx) => {
    await cli(ctx.mesh, 'promise', 'add', 'dmz-no-5432', '--site', 'dmz', '--closed', '5432');
    await cli(ctx.mesh, 'promise', 'add', 'web-nginx', '--module', 'web', '--runs', 'nginx');
    await cli(ctx.mesh, 'promise', 'add', 'two-hubs', '--hubs', '2');
    await cli(ctx.mesh, 'promise', 'add', 'web-db', '--node', 'web1', '--reaches', 'db1:5433');
    assert.equal(await state(ctx.mesh), {
      'dmz-no-5432': 'kept',
      'two-hubs': 'kept',
      'web-db': 'kept',
      'web-nginx': 'kept',
    });
    refused(await ctx.mesh.cli(['promise', 'add', 'x', '--hubs', '2', '--runs', 'nginx']), 'MSHQ3');
    // Two kinds each whole on its own: neither is taken in silence.
    refused(await ctx.mesh.cli(['promise', 'add', 'x', '--module', 'web', '--runs', 'nginx', '--hubs', '2']), 'MSHQ3');
    refused(await ctx.mesh.cli(['promise', 'add', 'x', '--node', 'web1', '--reaches', 'db1']), 'MSHQ3');
    refused(await ctx.mesh.cli(['promise', 'add', 'x', '--closed', '5432']), 'MSHQ3');
    // A port by name is no number: refused as a promise, not as SQL's cast.
    refused(await ctx.mesh.cli(['promise', 'add', 'x', '--site', 'dmz', '--closed', 'https']), 'MSHQ3');
    refused(await ctx.mesh.cli(['promise', 'add', 'Not_A_Name', '--hubs', '1']), 'MSHB7');
    refused(await ctx.mesh.cli(['promise', 'add', 'two-hubs', '--hubs', '1']), 'MSHQ4');
    const broken = refused(await ctx.mesh.cli(['promise', 'add', 'three-hubs', '--hubs', '3']), 'MSHQ2');
    assert.match(broken, '2 hubs (h1, h2), fewer than 3');
    assert.not.ok('three-hubs' in (await state(ctx.mesh)), 'a refused promise is not kept');
    refused(await ctx.mesh.cli(['promise', 'remove', 'ghost']), 'MSHQ5');
    assert.not.ok('x' in (await state(ctx.mesh)), 'no malformed promise is kept');
  },
);

/** CMD is refused by PROMISE with nothing committed or owed; passes once PROMISE is removed; COMMITTED reads the change. */
async function refusedThenPassed(
  mesh: Mesh,
  promise: string,
  cmd: string[],
  change: string,
  committed: () => Promise<boolean>,
) {
  await cli(mesh, 'declare', '--all', '--changed');
  const before = await counts(mesh);
  const said = refused(await mesh.cli(cmd), 'MSHQ1');
  assert.match(said, `promise ${promise}`, 'the refusal names the promise');
  assert.match(said, `refused: ${change} would break`, 'the refusal names the change');
  assert.equal(await counts(mesh), before, 'nothing declared, nothing owed');
  assert.not.ok(await committed(), 'the change is not committed');
  assert.is((await state(mesh))[promise], 'kept');
  await cli(mesh, 'promise', 'remove', promise);
  await cli(mesh, ...cmd);
  assert.ok(await committed(), 'the change is committed once the promise is gone');
}

P('module add opening 5432 on a dmz node breaks "no node of site dmz opens 5432"', async (ctx) => {
  const f = `${ctx.mesh.home}/edge2.json`;
  writeFileSync(f, JSON.stringify({ name: 'edge', resources: [opening(5432)] }));
  await refusedThenPassed(ctx.mesh, 'dmz-no-5432', ['module', 'add', f], 'module add edge', async () => {
    const [m] = await ctx.mesh.store.admin`select resources from catalogue.module where name = 'edge'`;
    return JSON.stringify(m!.resources).includes('5432');
  });
});

P('assign web to a node without nginx breaks "every node assigned module web runs service nginx"', async (ctx) => {
  await refusedThenPassed(ctx.mesh, 'web-nginx', ['assign', 'web', 'db1'], 'assign web db1', async () => {
    const r = await ctx.mesh.store.admin`select 1 from assignment.assignment where module = 'web' and node = 'db1'`;
    return r.length === 1;
  });
});

P('overlay hub --off breaks "at least two hubs"', async (ctx) => {
  await refusedThenPassed(ctx.mesh, 'two-hubs', ['overlay', 'hub', 'h2', '--off'], 'overlay hub h2 --off', async () => {
    const r = await ctx.mesh.store.admin`select 1 from overlay.hub where node = 'h2'`;
    return r.length === 0;
  });
});

P('provision revoke breaks "web1 reaches db1:5433"', async (ctx) => {
  await refusedThenPassed(
    ctx.mesh,
    'web-db',
    ['provision', 'revoke', 'appdb', 'web'],
    'provision revoke appdb web',
    async () => {
      const r = await ctx.mesh.store
        .admin`select 1 from provision.grant where provision = 'appdb' and consumer = 'web'`;
      return r.length === 0;
    },
  );
});

P('a promise broken by an unchecked change does not refuse an unrelated one, and the list says why', async (ctx) => {
  await cli(ctx.mesh, 'promise', 'add', 'one-hub', '--hubs', '1');
  await ctx.mesh.store.admin`update inventory.node set dialable = null where name = 'h1'`;
  const list = JSON.parse(await cli(ctx.mesh, 'promise', 'list', '--json')) as {
    name: string;
    state: string;
    why: string;
  }[];
  assert.equal(
    list.find((p) => p.name === 'one-hub'),
    { ...list.find((p) => p.name === 'one-hub')!, state: 'broken' },
  );
  assert.match(list.find((p) => p.name === 'one-hub')!.why, '0 hubs (none), fewer than 1');
  await cli(ctx.mesh, 'assign', 'nginx', 'db1');
});

P.run();
