// Change-freeze windows: a change to a node a window covers is held as a
// rollout holds it (mesh plan says "held by freeze F until T"), an explicit
// declare of it is refused, and when the window ends mesh serve declares it
// by itself; an override ends a window early with a reason the history keeps.
// Nodes are rows with queues (no host): a declaration is a row, what is owed
// is delivered to the queue.
import { suite } from '../harness/suite.js';
import { writeFileSync } from 'node:fs';
import * as assert from 'uvu/assert';
import { freshMesh, type Mesh, type Proc, type CliResult } from '../harness/mesh.js';
import { addModule, cli, until } from '../declare/helpers.js';
import { createQueues } from '../bench/lib.js';
import { b64 } from '../../src/crypto/keys.js';

interface Ctx {
  mesh: Mesh;
  serve: Proc;
}
const F = suite<Ctx>('change-freeze windows');

const app = (v: string) => [{ kind: 'file', path: '/srv/freeze/app.conf', content: b64(Buffer.from(v)), mode: '0644' }];
const refused = (r: CliResult, code: string) => {
  assert.is(r.code, 1, `expected ${code}, got exit ${r.code}: ${r.stdout}${r.stderr}`);
  assert.match(r.stderr, new RegExp(`\\(${code}\\)`));
};
const newest = async (mesh: Mesh, node: string) =>
  Number((await mesh.store.admin`select max(serial) as s from assignment.declaration where node = ${node}`)[0]!.s);
/** A time SECONDS from the database's now, as the CLI takes it. */
const inSeconds = async (mesh: Mesh, seconds: number) =>
  (await mesh.store.admin`select (now() + make_interval(secs => ${seconds}))::text as t`)[0]!.t as string;

F.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  await ctx.mesh.store.admin`
    insert into inventory.node (name, site, identity_key, overlay_key, sealing_key, enrolled_at)
    select n, s, k, k, k, now() from (values ('n1', 'a'), ('n2', 'b')) v(n, s),
           lateral (select decode(md5(n) || md5('k' || n), 'hex') as k) x`;
  await createQueues(ctx.mesh, ['n1', 'n2']);
  await addModule(ctx.mesh, 'app', app('v1'));
  await cli(ctx.mesh, 'assign', 'app', 'n1');
  await cli(ctx.mesh, 'assign', 'app', 'n2');
  ctx.serve = await ctx.mesh.serve();
});
F.after(async (ctx) => {
  await ctx.serve?.stop();
  await ctx.mesh?.stop();
});

F('a window that ends before it begins, or ended already, is refused', async (ctx) => {
  refused(await ctx.mesh.cli(['freeze', 'add', '--from', await inSeconds(ctx.mesh, 60), '--until', '1s']), 'MSHQ9');
  refused(await ctx.mesh.cli(['freeze', 'add', '--until', '2020-01-01']), 'MSHQ9');
  refused(await ctx.mesh.cli(['freeze', 'add', '--from', '2019-01-01', '--until', '2020-01-01']), 'MSHB3');
  refused(await ctx.mesh.cli(['freeze', 'add', '--until', 'whenever']), 'MSHQ6');
  refused(await ctx.mesh.cli(['freeze', 'remove', '99']), 'MSHB6');
  refused(await ctx.mesh.cli(['freeze', 'remove', 'x1']), 'MSHB6');
});

F(
  'a change during a window is held, said by plan, refused to declare, and goes out by itself when it ends',
  async (ctx) => {
    const n1 = await newest(ctx.mesh, 'n1');
    const n2 = await newest(ctx.mesh, 'n2');
    // An hour: nothing here may race its end; the test brings the end near below.
    const until_ = await inSeconds(ctx.mesh, 3600);
    const f = JSON.parse(await cli(ctx.mesh, 'freeze', 'add', '--until', until_, '--site', 'a', '--json')) as {
      id: number;
      state: string;
    };
    assert.is(f.state, 'holding');
    const f2 = `${ctx.mesh.home}/app2.json`;
    writeFileSync(f2, JSON.stringify({ name: 'app', resources: app('v2') }));
    const said = await cli(ctx.mesh, 'module', 'add', f2);
    assert.match(said, new RegExp(`held by freeze ${f.id} until .*: n1 \\(it goes out when the window ends`));
    assert.match(said, 're-declaring n2');
    assert.is(await newest(ctx.mesh, 'n1'), n1, 'n1, inside the window, keeps what it has');
    assert.ok((await newest(ctx.mesh, 'n2')) > n2, 'n2, outside it, is declared at once');
    assert.match(await cli(ctx.mesh, 'plan'), new RegExp(`held by freeze ${f.id} until .*: n1`));
    assert.match(await cli(ctx.mesh, 'plan', '--all'), new RegExp(`held by freeze ${f.id} until .*: n1`));
    refused(await ctx.mesh.cli(['declare', 'n1']), 'MSHQ8');
    // The window's end brought to a second from now, as if the hour had passed; then nobody does
    // anything more: serve ends the window and declares what it held.
    await ctx.mesh.store.admin`update assignment.freeze set until_at = now() + interval '1 second' where id = ${f.id}`;
    await until('serve to declare n1 once the window ended', async () => (await newest(ctx.mesh, 'n1')) > n1, 60_000);
    const list = JSON.parse(await cli(ctx.mesh, 'freeze', 'list', '--json')) as { id: number; state: string }[];
    assert.is(list.find((x) => x.id === f.id)!.state, 'ended');
    await ctx.serve.waitFor(new RegExp(`freeze ${f.id} ended`), 5000);
  },
);

F('an override needs a reason, sends what was held at once, and the history keeps the reason', async (ctx) => {
  const f = JSON.parse(
    await cli(ctx.mesh, 'freeze', 'add', '--until', await inSeconds(ctx.mesh, 3600), '--module', 'app', '--json'),
  ) as { id: number };
  const before = { n1: await newest(ctx.mesh, 'n1'), n2: await newest(ctx.mesh, 'n2') };
  const f3 = `${ctx.mesh.home}/app3.json`;
  writeFileSync(f3, JSON.stringify({ name: 'app', resources: app('v3') }));
  assert.match(await cli(ctx.mesh, 'module', 'add', f3), new RegExp(`held by freeze ${f.id} until .*: n1, n2`));
  assert.equal({ n1: await newest(ctx.mesh, 'n1'), n2: await newest(ctx.mesh, 'n2') }, before);
  refused(await ctx.mesh.cli(['freeze', 'override', String(f.id)]), 'MSHB4');
  assert.match(
    await cli(ctx.mesh, 'freeze', 'override', String(f.id), '--reason', 'urgent fix'),
    `freeze ${f.id} overridden (urgent fix)`,
  );
  // Sent at once: by the override's own W2 step, or by serve's if it saw the window end first.
  await until(
    'n1 and n2 declared after the override',
    async () => (await newest(ctx.mesh, 'n1')) > before.n1 && (await newest(ctx.mesh, 'n2')) > before.n2,
    30_000,
  );
  const [row] = await ctx.mesh.store
    .admin`select detail from audit.event where kind = 'freeze' and detail->>'act' = 'overridden'`;
  assert.is((row!.detail as { reason: string }).reason, 'urgent fix');
  refused(await ctx.mesh.cli(['freeze', 'override', String(f.id), '--reason', 'again']), 'MSHB5');
});

F.run();
