// V1: every report names its agent's version, inventory keeps it, and the
// skew rule in SQL says which agents the control plane speaks with: the
// current minor and the one before by default. agent_versions judges each
// node, `mesh node list --outdated` prints the outdated ones, node_status and
// `mesh node list` show the version, and /metrics counts nodes by version.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, enrol, refusedWith, type SqlCtx } from '../helpers.js';
import { runCli, MESH } from '../../harness/mesh.js';

const V = suite<SqlCtx>('V1: agent versions and the skew rule');

/** Each node and the version its report names (none: never reported). */
const FLEET: Record<string, string | null> = {
  current: '0.3.2',
  patch: '0.3.0',
  minor: '0.2.9',
  old: '0.1.5',
  major: '1.3.2',
  newer: '0.4.0',
  silent: null,
};

V.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  for (const [name, version] of Object.entries(FLEET)) {
    await enrol(ctx.as, name);
    if (version) await ctx.as.inventory`select inventory.record_agent_version(${name}, ${version})`;
  }
  await ctx.as.inventory`select inventory.state_control_version('0.3.2')`;
});
V.after(async (ctx) => {
  await closeRoles(ctx);
});

async function judged(ctx: SqlCtx) {
  const rows = await ctx.as
    .inventory`select name, speaks, behind, outdated, why from inventory.agent_versions order by name`;
  return Object.fromEntries(rows.map((r) => [r.name, { speaks: r.speaks, behind: r.behind, outdated: r.outdated }]));
}

V('a reported version is kept, shown by node_status, and written again only when it changed', async (ctx) => {
  const [s] = await ctx.as.inventory`select agent_version from inventory.node_status where name = 'current'`;
  assert.is(s!.agent_version, '0.3.2');
  const [same] = await ctx.as.inventory`select inventory.record_agent_version('current', '0.3.2') as changed`;
  assert.is(same!.changed, false, 'the same version again writes nothing');
  const [up] = await ctx.as.inventory`select inventory.record_agent_version('current', '0.3.3') as changed`;
  assert.is(up!.changed, true, 'another version than the one said before: serve declares again');
  await ctx.as.inventory`select inventory.record_agent_version('current', '0.3.2')`;
  await enrol(ctx.as, 'fresh');
  const [first] = await ctx.as.inventory`select inventory.record_agent_version('fresh', '0.3.2') as changed`;
  assert.is(first!.changed, false, 'a first version changes nothing a node may be declared');
  await ctx.as.inventory`select inventory.retire_node('fresh')`;
  const [silent] = await ctx.as.inventory`select agent_version from inventory.node_status where name = 'silent'`;
  assert.is(silent!.agent_version, null);
});

V(
  'a version that is not MAJOR.MINOR.PATCH is refused (MSHV1), and so is such a control plane version (MSHV0)',
  async (ctx) => {
    await refusedWith(ctx.as.inventory`select inventory.record_agent_version('current', '0.3')`, 'MSHV1');
    await refusedWith(ctx.as.inventory`select inventory.record_agent_version('current', ${null})`, 'MSHV1');
    await refusedWith(ctx.as.inventory`select inventory.state_control_version('latest')`, 'MSHV0');
    const [s] = await ctx.as.inventory`select agent_version from inventory.node where name = 'current'`;
    assert.is(s!.agent_version, '0.3.2', 'a refused version leaves the one kept');
  },
);

V('the skew rule: the current minor and the one before speak; older, newer and another major do not', async (ctx) => {
  const j = await judged(ctx);
  assert.equal(j.current, { speaks: true, behind: false, outdated: false });
  assert.equal(j.patch, { speaks: true, behind: true, outdated: true }, 'a patch behind is outdated, and spoken with');
  assert.equal(j.minor, { speaks: true, behind: true, outdated: true }, 'the minor before is spoken with');
  assert.equal(j.old, { speaks: false, behind: true, outdated: true }, 'two minors before is outside');
  assert.equal(j.major, { speaks: false, behind: false, outdated: true }, 'another major is outside');
  assert.equal(
    j.newer,
    { speaks: false, behind: false, outdated: true },
    'an agent newer than the control plane is outside',
  );
  assert.equal(j.silent, { speaks: null, behind: null, outdated: false }, 'a node that never reported is not judged');
});

V('a node whose reports name no version (an agent from before versions) is outdated', async (ctx) => {
  await enrol(ctx.as, 'ancient');
  await ctx.as.inventory`select inventory.record_report('ancient', 1, '[]'::jsonb, '[]'::jsonb)`;
  const [a] = await ctx.as.inventory`select outdated, why from inventory.agent_versions where name = 'ancient'`;
  assert.is(a!.outdated, true);
  assert.match(a!.why as string, /reports no version/);
  await ctx.as.inventory`select inventory.retire_node('ancient')`;
});

V(
  'the rule is a setting: 0 minors back speaks with the current minor only; out of range is refused (MSHV2)',
  async (ctx) => {
    await ctx.as.inventory`select inventory.set_agent_skew(0)`;
    try {
      assert.equal((await judged(ctx)).minor, { speaks: false, behind: true, outdated: true });
      assert.equal((await judged(ctx)).patch, { speaks: true, behind: true, outdated: true });
    } finally {
      await ctx.as.inventory`select inventory.set_agent_skew(1)`;
    }
    await refusedWith(ctx.as.inventory`select inventory.set_agent_skew(-1)`, 'MSHV2');
    await refusedWith(ctx.as.inventory`select inventory.set_agent_skew(101)`, 'MSHV2');
  },
);

V('/metrics counts nodes by version, never by node, and counts the outdated', async (ctx) => {
  const rows = await ctx.as
    .inventory`select labels, value from inventory.fleet_metrics() where metric = 'mesh_nodes_by_agent_version'`;
  const by = Object.fromEntries(rows.map((r) => [(r.labels as { version: string }).version, r.value]));
  assert.equal(by, { '0.3.2': 1, '0.3.0': 1, '0.2.9': 1, '0.1.5': 1, '1.3.2': 1, '0.4.0': 1, unknown: 1 });
  const [o] = await ctx.as.inventory`select value from inventory.fleet_metrics() where metric = 'mesh_nodes_outdated'`;
  assert.is(o!.value, 5);
});

V('mesh node list shows each version; --outdated lists the outdated nodes and why', async (ctx) => {
  const env = { ...process.env, ...ctx.store.env };
  const list = await runCli(MESH, ['node', 'list', '--json'], env);
  assert.is(list.code, 0, list.stderr);
  const rows = JSON.parse(list.stdout) as { name: string; agent_version: string | null }[];
  assert.equal(Object.fromEntries(rows.map((r) => [r.name, r.agent_version])), FLEET);
  const human = await runCli(MESH, ['node', 'list'], env);
  assert.match(human.stdout, /AGENT_VERSION/);
  assert.match(human.stdout, /^current .*0\.3\.2$/m);

  const out = await runCli(MESH, ['node', 'list', '--outdated', '--json'], env);
  assert.is(out.code, 0, out.stderr);
  const outdated = JSON.parse(out.stdout) as { name: string; why: string }[];
  assert.equal(
    outdated.map((r) => r.name),
    ['major', 'minor', 'newer', 'old', 'patch'],
  );
  assert.match(
    outdated.find((r) => r.name === 'old')!.why,
    /outside the skew rule: the control plane 0\.3\.2 speaks with 0\.2 to 0\.3/,
  );
  assert.match(outdated.find((r) => r.name === 'patch')!.why, /behind the control plane 0\.3\.2/);
  const text = await runCli(MESH, ['node', 'list', '--outdated'], env);
  assert.match(text.stdout, /^old +0\.1\.5 +0\.3\.2 +outside the skew rule/m);
});

V.run();
