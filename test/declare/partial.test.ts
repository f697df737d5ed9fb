// R3: a partial failure moves last_seen and nothing else. A report that says
// "applied, but this failed" is no account of what the machine holds:
// recorded as one, it would tell a rebuilt node to remove what it still has.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { addModule, cli, b64, until, liveNode, stopLiveNode, type LiveNode } from './helpers.js';

const P = suite<LiveNode>('a partial failure is not an account');
P.before(async (ctx) => {
  Object.assign(ctx, await liveNode());
});
P.after(async (ctx) => {
  await stopLiveNode(ctx);
});

P(
  'a declaration with a failing resource: last_seen moves, no report is recorded, the serial is not acknowledged',
  async (ctx) => {
    // Outside the host's roots: the file driver refuses it, the other file is written.
    const outside = '/var/lib/mesh-partial-test-outside/x.conf';
    await addModule(ctx.mesh, 'half', [
      { kind: 'file', path: join(ctx.root, 'ok.conf'), content: b64('ok'), mode: '0644' },
      { kind: 'file', path: outside, content: b64('no'), mode: '0644' },
    ]);
    await ctx.mesh.store.admin`update inventory.node set last_seen = now() - interval '10 minutes' where name = 'web1'`;
    const mark = ctx.serve.output().length;
    // The assignment owes web1 serial 2 (1 was its firewall, applied whole).
    await cli(ctx.mesh, 'assign', 'half', 'web1');
    await ctx.proc.waitFor(/applied declaration 2: .*1 failed/, 20_000);
    await ctx.serve.waitFor(new RegExp(`report: web1 could not apply file:${outside}`), 20_000, mark);
    await until(
      'last_seen moved',
      async () =>
        (await ctx.mesh.store.admin`select state from inventory.node_status where name = 'web1'`)[0]!.state === 'here',
    );
    const reports = await ctx.mesh.store.admin`select serial from inventory.report where node = 'web1'`;
    assert.equal(
      reports.map((r) => Number(r.serial)),
      [1],
      'the report stays that of serial 1, the last applied whole',
    );
    const [st] = await ctx.mesh.store
      .admin`select state from assignment.declaration_status where node = 'web1' and serial = 2`;
    assert.is(st!.state, 'sent', 'a partly applied declaration is not acknowledged');
  },
);

P.run();
