// `mesh node show NODE --at TIME` and `mesh diff`: what each node was declared
// at each of three times the test recorded, and the differences between them
// as mesh plan --all prints them, from the kept declarations. Nodes are rows
// (nothing here crosses the broker): a node "applies" when its declaration is
// marked acknowledged, as serve does on its report.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { freshMesh, type Mesh, type CliResult } from '../harness/mesh.js';
import { addModule, cli } from '../declare/helpers.js';
import { b64 } from '../../src/crypto/keys.js';

interface Shown {
  node: string;
  declared: { serial: number; resources: { id: string }[] } | null;
  applied: { serial: number } | null;
}
interface Ctx {
  mesh: Mesh;
  /** Each recorded time, and each node's declared serial and resources then. */
  times: { at: string; declared: Record<string, { serial: number; resources: unknown }> }[];
}
const H = suite<Ctx>('history: declared at a time, and the difference');

const CONF = '/srv/history/app.conf';
const app = (v: string) => [
  { kind: 'file', path: CONF, content: b64(Buffer.from(v)), mode: '0644' },
  { kind: 'service', name: 'app', exec: ['/bin/sleep', '1000'], restartOn: [`file:${CONF}`] },
];
const refused = (r: CliResult, code: string) => {
  assert.is(r.code, 1, `expected ${code}, got exit ${r.code}: ${r.stdout}${r.stderr}`);
  assert.match(r.stderr, new RegExp(`\\(${code}\\)`));
};
const show = async (mesh: Mesh, node: string, at: string) =>
  JSON.parse(await cli(mesh, 'node', 'show', node, '--at', at, '--json')) as Shown;

/** Declare what changed, then note the time and what each node was declared, from the store. */
async function record(ctx: Ctx) {
  await cli(ctx.mesh, 'declare', '--all', '--changed');
  const [t] = await ctx.mesh.store.admin`select clock_timestamp()::text as at`;
  const rows = await ctx.mesh.store.admin`select distinct on (node) node, serial,
      ((convert_from(envelope, 'utf8')::jsonb->>'body')::jsonb)->'resources' as resources
      from assignment.declaration order by node, serial desc`;
  ctx.times.push({
    at: t!.at as string,
    declared: Object.fromEntries(rows.map((r) => [r.node, { serial: Number(r.serial), resources: r.resources }])),
  });
}

H.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.times = [];
  await ctx.mesh.store.admin`
    insert into inventory.node (name, site, identity_key, overlay_key, sealing_key, enrolled_at)
    select n, 'default', k, k, k, now() from (values ('n1'), ('n2')) v(n),
           lateral (select decode(md5(n) || md5('k' || n), 'hex') as k) x`;
  // Time 1: app v1 on both; n1 reports it applied.
  await addModule(ctx.mesh, 'app', app('v1'));
  await cli(ctx.mesh, 'assign', 'app', 'n1');
  await cli(ctx.mesh, 'assign', 'app', 'n2');
  await record(ctx);
  await ctx.mesh.store.admin`update assignment.declaration set acknowledged_at = now() where node = 'n1'`;
  // Time 2: app v2 on both.
  await addModule(ctx.mesh, 'app', app('v2'));
  await record(ctx);
  // Time 3: n2 no longer runs app.
  await cli(ctx.mesh, 'unassign', 'app', 'n2');
  await record(ctx);
});
H.after(async (ctx) => {
  await ctx.mesh?.stop();
});

H('node show --at returns what was declared at each of the three times', async (ctx) => {
  assert.is(ctx.times.length, 3);
  for (const [i, t] of ctx.times.entries())
    for (const node of ['n1', 'n2']) {
      const s = await show(ctx.mesh, node, t.at);
      assert.is(s.declared?.serial, t.declared[node]!.serial, `${node} at time ${i + 1}`);
      assert.equal(s.declared?.resources, t.declared[node]!.resources, `${node}'s resources at time ${i + 1}`);
    }
  assert.ok(
    new Set(ctx.times.map((t) => t.declared.n2!.serial)).size === 3,
    'three different declarations were recorded',
  );
});

H('what a node reported applied is told apart from what it was declared', async (ctx) => {
  const s = await show(ctx.mesh, 'n1', ctx.times[2]!.at);
  assert.is(s.applied?.serial, ctx.times[0]!.declared.n1!.serial, 'n1 applied its first declaration and no other');
  assert.is((await show(ctx.mesh, 'n2', ctx.times[2]!.at)).applied, null);
  assert.is((await show(ctx.mesh, 'n1', '1970-01-01')).declared, null, 'before its first declaration: nothing');
  assert.match(await cli(ctx.mesh, 'node', 'show', 'n1', '--at', ctx.times[1]!.at), 'reported applied: declaration');
});

H('diff prints the change between two times as mesh plan --all does; fleet-wide groups the nodes', async (ctx) => {
  const [t1, t2, t3] = ctx.times.map((t) => t.at);
  assert.is(
    await cli(ctx.mesh, 'diff', 'n1', '--from', t1!, '--to', t2!),
    `1 node: file:${CONF} changed, service:app restarts (n1)\n`,
  );
  assert.is(
    await cli(ctx.mesh, 'diff', '--from', t1!, '--to', t2!),
    `2 nodes: file:${CONF} changed, service:app restarts (n1, n2)\n`,
  );
  assert.is(
    await cli(ctx.mesh, 'diff', '--from', t2!, '--to', t3!),
    `1 node: file:${CONF} removed, service:app removed (n2)\n`,
  );
  assert.match(await cli(ctx.mesh, 'diff', 'n1', '--from', t2!, '--to', t3!), 'nothing declared differently');
  const d = JSON.parse(await cli(ctx.mesh, 'diff', '--from', t1!, '--to', t3!, '--json')) as {
    nodes: { node: string; changes: { id: string; change: string }[] }[];
  };
  assert.equal(
    d.nodes.map((n) => [n.node, n.changes.map((c) => `${c.id} ${c.change}`)]),
    [
      ['n1', [`file:${CONF} changed`, 'service:app restarts']],
      ['n2', [`file:${CONF} removed`, 'service:app removed']],
    ],
  );
});

H('a time that is not one, and a node never declared, are refused', async (ctx) => {
  refused(await ctx.mesh.cli(['node', 'show', 'n1', '--at', 'yesterday-ish']), 'MSHQ6');
  refused(await ctx.mesh.cli(['diff', 'n1', '--to', 'now']), 'MSHQ6');
  refused(await ctx.mesh.cli(['node', 'show', 'ghost', '--at', '2h']), 'MSHQ7');
  refused(await ctx.mesh.cli(['diff', 'ghost', '--from', '2h', '--to', 'now']), 'MSHQ7');
});

H.run();
