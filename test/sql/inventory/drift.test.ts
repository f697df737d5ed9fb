// Drift that repeats is news: each resource a host put back is counted, and
// one put back more than fighting_after times within the hour is flagged as
// fighting something on the machine (inventory.drift, mesh drift).
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, enrol, type SqlCtx } from '../helpers.js';

const D = suite<SqlCtx>('drift, as mesh_inventory');
D.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  await enrol(ctx.as, 'web1');
  await enrol(ctx.as, 'web2');
});
D.after(async (ctx) => {
  await closeRoles(ctx);
});

const put = async (ctx: SqlCtx, node: string, ids: string[]) =>
  (
    await ctx.as
      .inventory`select inventory.record_corrections(node_name => ${node}::text, resources => ${ids}::text[]) as n`
  )[0]!.n as number;
const drift = async (ctx: SqlCtx, node: string, resource: string) =>
  (
    await ctx.as
      .inventory`select last_hour, times, fighting, fighting_after from inventory.drift where node = ${node} and resource = ${resource}`
  )[0];

D('each resource put back is counted, one row an id; a report with none counts nothing', async (ctx) => {
  assert.is(await put(ctx, 'web1', ['file:/etc/a', 'service:web']), 2);
  assert.is(await put(ctx, 'web1', []), 0);
  assert.equal(await drift(ctx, 'web1', 'file:/etc/a'), { last_hour: 1, times: 1, fighting: false, fighting_after: 3 });
  assert.equal(await drift(ctx, 'web1', 'service:web'), { last_hour: 1, times: 1, fighting: false, fighting_after: 3 });
});

D('a node that is not enrolled counts nothing', async (ctx) => {
  assert.is(await put(ctx, 'nobody', ['file:/etc/a']), 0);
  assert.is((await ctx.as.inventory`select count(*)::int as n from inventory.drift where node = 'nobody'`)[0]!.n, 0);
});

D('put back N times in the hour is not fighting; N + 1 times is', async (ctx) => {
  for (let i = 0; i < 3; i++) await put(ctx, 'web2', ['file:/etc/cron-edited']);
  assert.equal(await drift(ctx, 'web2', 'file:/etc/cron-edited'), {
    last_hour: 3,
    times: 3,
    fighting: false,
    fighting_after: 3,
  });
  await put(ctx, 'web2', ['file:/etc/cron-edited']);
  assert.equal(await drift(ctx, 'web2', 'file:/etc/cron-edited'), {
    last_hour: 4,
    times: 4,
    fighting: true,
    fighting_after: 3,
  });
  assert.is((await drift(ctx, 'web1', 'file:/etc/a'))!.fighting, false, 'another resource is not flagged with it');
});

D('only the last hour counts toward fighting; every time counts toward times', async (ctx) => {
  await ctx.store.admin`insert into inventory.correction (node, resource, corrected_at)
    select 'web1', 'file:/etc/old', now() - interval '61 minutes' from generate_series(1, 10)`;
  await put(ctx, 'web1', ['file:/etc/old']);
  assert.equal(await drift(ctx, 'web1', 'file:/etc/old'), {
    last_hour: 1,
    times: 11,
    fighting: false,
    fighting_after: 3,
  });
});

D('the threshold is a setting: fighting after 1 flags what was put back twice', async (ctx) => {
  assert.is((await ctx.as.inventory`select inventory.set_fighting_after(times => 1) as n`)[0]!.n, 1);
  await put(ctx, 'web1', ['file:/etc/a']);
  assert.equal(await drift(ctx, 'web1', 'file:/etc/a'), { last_hour: 2, times: 2, fighting: true, fighting_after: 1 });
  await ctx.as.inventory`select inventory.set_fighting_after(times => 3)`;
});

D("R3: a refusal moves last_seen, is kept as the node's last, and changes nothing of its last report", async (ctx) => {
  await ctx.as
    .inventory`select inventory.record_report(node_name => 'web1', report_serial => 4, held_now => '[]'::jsonb, failed_now => '[]'::jsonb)`;
  const before = (
    await ctx.as.inventory`select serial, held::text, reported_at from inventory.report where node = 'web1'`
  )[0];
  await ctx.store.admin`update inventory.node set last_seen = now() - interval '1 hour' where name = 'web1'`;
  await ctx.as
    .inventory`select inventory.record_refusal(node_name => 'web1', refused_serial => 5, refusal_fault => 'replayed', refusal_reason => 'serial 5 is not newer than 5')`;
  assert.equal(
    (await ctx.as.inventory`select serial, held::text, reported_at from inventory.report where node = 'web1'`)[0],
    before,
  );
  assert.equal(
    (await ctx.as.inventory`select serial::int, fault, reason from inventory.refusal where node = 'web1'`)[0],
    { serial: 5, fault: 'replayed', reason: 'serial 5 is not newer than 5' },
  );
  assert.is((await ctx.as.inventory`select state from inventory.node_status where name = 'web1'`)[0]!.state, 'here');
  assert.is(
    (
      await ctx.as
        .inventory`select inventory.record_refusal(node_name => 'nobody', refused_serial => null, refusal_fault => 'malformed', refusal_reason => 'x') as r`
    )[0]!.r,
    0,
  );
});

D.run();
