// R4 at its edge: 150 s without a word is still here, past it is out of
// touch, and `mesh node list` says what inventory.node_status says.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, enrol, type SqlCtx } from '../helpers.js';
import { runCli, MESH, type CliResult } from '../../harness/mesh.js';
import { until } from '../../declare/helpers.js';

const H = suite<SqlCtx>('R4: the edge of here');
H.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  await enrol(ctx.as, 'recent');
  await enrol(ctx.as, 'silent');
});
H.after(async (ctx) => {
  await closeRoles(ctx);
});

// One transaction: now() is the same instant in the update and in the view.
async function stateAt(ctx: SqlCtx, name: string, seconds: number): Promise<string> {
  return ctx.as.inventory.begin(async (sql) => {
    await sql`update inventory.node set last_seen = now() - make_interval(secs => ${seconds}) where name = ${name}`;
    const [s] = await sql`select state from inventory.node_status where name = ${name}`;
    return s!.state as string;
  }) as Promise<string>;
}

H('in SQL: heard 149 s ago is here, 151 s ago is out of touch', async (ctx) => {
  assert.is(await stateAt(ctx, 'recent', 149), 'here');
  assert.is(await stateAt(ctx, 'recent', 150), 'here');
  assert.is(await stateAt(ctx, 'silent', 151), 'out of touch 2m');
});

H('here_since: set when first heard and when heard after 150 s of silence, kept while heard within it', async (ctx) => {
  await enrol(ctx.as, 'back');
  const since = async () =>
    (await ctx.as.inventory`select here_since from inventory.node where name = 'back'`)[0]!.here_since as Date | null;
  const heardAgo = (secs: number) =>
    ctx.as.inventory`update inventory.node set last_seen = now() - make_interval(secs => ${secs}) where name = 'back'`;
  const heard = () => ctx.as.inventory`select inventory.mark_heard_many(array['back'])`;
  await ctx.as.inventory`update inventory.node set last_seen = null, here_since = null where name = 'back'`;
  await heardAgo(100);
  const first = await since();
  assert.ok(first, 'the first heard sets it');
  await heard();
  assert.equal(await since(), first, 'heard again 100 s later: still here since the first');
  await heardAgo(151);
  await heard();
  assert.ok((await since())!.getTime() > first!.getTime(), 'heard after 151 s of silence: here since now');
});

/**
 * What `mesh node list` says when, at the instant it reads, each node was last
 * heard AGES seconds before. The CLI's read is made to wait on a lock we hold;
 * its now() is fixed when its statement starts, so we read that instant from
 * pg_stat_activity and set last_seen from it before letting the read go on:
 * the edge is judged exactly, however slowly the CLI started.
 */
async function listedAt(ctx: SqlCtx, ages: Record<string, number>): Promise<Record<string, string>> {
  let result: CliResult | undefined;
  let cli: Promise<CliResult> | undefined;
  await ctx.as.inventory.begin(async (sql) => {
    await sql`lock table inventory.node in access exclusive mode`;
    cli = runCli(MESH, ['node', 'list', '--json'], { ...process.env, ...ctx.store.env }).then((r) => (result = r));
    const pid = await until('mesh node list waiting on the lock', async () => {
      if (result) throw new Error(`mesh node list ended before it read: ${result.stderr}`);
      const [w] = await ctx.store
        .admin`select pid from pg_stat_activity where datname = ${ctx.store.db} and usename = 'mesh_inventory'
                                         and wait_event_type = 'Lock' and query ilike '%fleet_page%'`;
      return w?.pid as number | undefined;
    });
    for (const [name, secs] of Object.entries(ages)) {
      await sql`update inventory.node set last_seen = (select xact_start from pg_stat_activity where pid = ${pid}) - make_interval(secs => ${secs})
                 where name = ${name}`;
    }
  });
  const r = await cli!;
  assert.is(r.code, 0, r.stderr);
  return Object.fromEntries((JSON.parse(r.stdout) as { name: string; state: string }[]).map((n) => [n.name, n.state]));
}

H('in mesh node list: heard 149 s ago is here, 151 s ago is out of touch', async (ctx) => {
  const said = await listedAt(ctx, { recent: 149, silent: 151 });
  assert.equal({ recent: said.recent, silent: said.silent }, { recent: 'here', silent: 'out of touch 2m' });
});

H.run();
