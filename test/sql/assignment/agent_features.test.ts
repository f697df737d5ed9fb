// V1: a node is declared only the kinds its agent applies. agent_feature
// names the first mesh-host version that applies each kind; a node reporting
// an older agent has those resources held back from its composition (and
// sent once it reports a version that applies them), and assigning it a
// module with such a kind is refused (MSHV3).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, enrol, putModule, assign, refusedWith, type SqlCtx } from '../helpers.js';

const F = suite<SqlCtx>('V1: a node is declared only what its agent applies');

const FILE = { id: 'file:/etc/motd', kind: 'file', path: '/etc/motd', content: 'aGkK', mode: '0644' };
const DIR = { id: 'directory:/srv/app', kind: 'directory', path: '/srv/app', mode: '0755' };

F.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  for (const n of ['old', 'new', 'quiet']) await enrol(ctx.as, n);
  await putModule(ctx.as, 'web', [FILE, DIR]);
  await putModule(ctx.as, 'motd', [FILE]);
  // As if a later mesh-host brought file resources: 0.2.0 is the first to apply them.
  await ctx.as.assignment`select assignment.set_agent_feature('file', '0.2.0')`;
  // Assigned before any version was reported: nothing is known to refuse.
  for (const n of ['old', 'new', 'quiet']) await assign(ctx.as, 'web', n);
});
F.after(async (ctx) => {
  await closeRoles(ctx);
});

async function composed(ctx: SqlCtx, node: string): Promise<string[]> {
  const [c] = await ctx.as.assignment`select assignment.compose(${node}) as r`;
  // Only the module's resources: the firewall, brokers and overlay every node gets are beside the point.
  return (c!.r as { id: string }[]).map((r) => r.id).filter((id) => /^(file|directory):/.test(id));
}

F('a node reporting an old agent is declared everything but the kinds it cannot apply', async (ctx) => {
  await ctx.as.inventory`select inventory.record_agent_version('old', '0.1.9')`;
  await ctx.as.inventory`select inventory.record_agent_version('new', '0.2.0')`;
  assert.equal(await composed(ctx, 'old'), ['directory:/srv/app'], 'the file is held from 0.1.9');
  assert.equal(await composed(ctx, 'new'), ['directory:/srv/app', 'file:/etc/motd']);
  assert.equal(await composed(ctx, 'quiet'), ['directory:/srv/app', 'file:/etc/motd'], 'no version said: as before');
  const holds = await ctx.as
    .assignment`select node, kind, agent_version, first_version from assignment.agent_holds order by node, kind`;
  assert.equal(
    holds.map((h) => ({ ...h })),
    [{ node: 'old', kind: 'file', agent_version: '0.1.9', first_version: '0.2.0' }],
  );
  const [each] = await ctx.as.assignment`select count(*)::int as n from assignment.compose_each(array['old','new']) c
                                          where c.resources like '%file:/etc/motd%'`;
  assert.is(each!.n, 1, 'compose_each, the path declare takes, holds it too');
});

F('once the node reports an agent that applies it, the held kind is composed again', async (ctx) => {
  await ctx.as.inventory`select inventory.record_agent_version('old', '0.2.1')`;
  try {
    assert.equal(await composed(ctx, 'old'), ['directory:/srv/app', 'file:/etc/motd']);
  } finally {
    await ctx.as.inventory`select inventory.record_agent_version('old', '0.1.9')`;
  }
});

F('assigning a module with a kind the node cannot apply is refused (MSHV3), naming both versions', async (ctx) => {
  const e = await refusedWith(ctx.as.assignment`select assignment.assign('motd', 'old')`, 'MSHV3');
  assert.match(e.message, /node old runs mesh-host 0\.1\.9, which applies them from 0\.2\.0/);
  const [a] = await ctx.as.assignment`select count(*)::int as n from assignment.assignment where module = 'motd'`;
  assert.is(a!.n, 0);
  await assign(ctx.as, 'motd', 'new');
});

F('a feature is a kind and a version: anything else is refused (MSHV4)', async (ctx) => {
  await refusedWith(ctx.as.assignment`select assignment.set_agent_feature('File Resources', '0.2.0')`, 'MSHV4');
  await refusedWith(ctx.as.assignment`select assignment.set_agent_feature('file', 'next')`, 'MSHV4');
  const [f] = await ctx.as.assignment`select first_version from assignment.agent_feature where kind = 'file'`;
  assert.is(f!.first_version, '0.2.0');
});

F.run();
