// R2: a rebuilt node is handed its declaration, not only its last report.
// The machine lost its disk: nothing kept, nothing applied, and nothing new
// waits on its queue (the declaration it held was consumed long ago). It
// comes back to what it was told only because the mesh hands it again.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { addModule, cli, b64, until, liveNode, stopLiveNode, type LiveNode } from './helpers.js';

const R = suite<LiveNode>('a rebuilt host is handed its declaration');
R.before(async (ctx) => {
  Object.assign(ctx, await liveNode());
});
R.after(async (ctx) => {
  await stopLiveNode(ctx);
});

R('with an empty queue, a host that lost everything applies its newest declaration again', async (ctx) => {
  const conf = join(ctx.root, 'app.conf');
  await addModule(ctx.mesh, 'app', [{ kind: 'file', path: conf, content: b64('told'), mode: '0644' }]);
  // The assignment owes web1 serial 2 (1 was its firewall, at enrolment).
  await cli(ctx.mesh, 'assign', 'app', 'web1');
  await ctx.proc.waitFor(/applied declaration 2\b/, 20_000);
  await until(
    'report of 2',
    async () =>
      (await ctx.mesh.store.admin`select 1 from inventory.report where node = 'web1' and serial = 2`).length > 0,
  );
  await ctx.proc.stop();
  for (const f of ['applied.json', 'declaration.signed']) rmSync(join(ctx.host.dir, f));
  rmSync(conf);
  // Declaration 2 was acked when applied: nothing of it waits on the queue now.
  ctx.proc = ctx.host.run();
  await ctx.proc.waitFor(/asking the mesh for its declaration, last report and floor/, 20_000);
  await ctx.proc.waitFor(/applied declaration 2\b/, 20_000);
  assert.ok(existsSync(conf));
  assert.is(readFileSync(conf, 'utf8'), 'told');
});

R.run();
