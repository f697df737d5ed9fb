// Faults with nothing lost, on servers of this suite's own: PostgreSQL
// restarted under serve, the broker killed with reports and heards in
// flight, serve killed mid-stream, a host killed mid-apply.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { adminConnect } from '../harness/rabbitmq.js';
import { privateServers, type Private } from '../harness/private.js';
import { freshMesh, spawnProc, MESH_HOST, type Mesh, type Proc, type Host } from '../harness/mesh.js';
import { addModule, cli, b64, root, until } from '../declare/helpers.js';
import { tally, say, summary } from './tally.js';

interface Ctx {
  srv: Private;
  mesh: Mesh;
  serve: Proc;
  host: Host;
  proc: Proc;
  root: string;
}
const Crash = suite<Ctx>('faults with nothing lost');

const hostEnv = (r: string) => ({
  MESH_HOST_ROOTS: r,
  MESH_HOST_RECONCILE_SECONDS: '3600',
  MESH_HOST_BACKOFF_MIN_SECONDS: '0.3',
  MESH_HOST_BACKOFF_MAX_SECONDS: '1',
  MESH_HOST_HEARD_SECONDS: '0.5',
});

Crash.before(async (ctx) => {
  ctx.srv = await privateServers();
  ctx.mesh = await freshMesh({ servers: ctx.srv.servers });
  ctx.serve = await ctx.mesh.serve();
  ctx.root = root();
  const j = await ctx.mesh.joined('web1', hostEnv(ctx.root));
  ctx.host = j.host;
  ctx.proc = j.proc;
});
Crash.after.each(async (ctx) => {
  if (process.env.MESH_TEST_VERBOSE)
    console.log(`--- host said:\n${ctx.proc.output()}\n--- serve said:\n${ctx.serve.output()}`);
});
Crash.after(async (ctx) => {
  await ctx.mesh.stop().catch(() => {});
  await ctx.srv.stop();
  rmSync(ctx.root, { recursive: true, force: true });
});

async function recorded(ctx: Ctx): Promise<number> {
  const [r] = await ctx.mesh.store.admin`select serial from inventory.report where node = 'web1'`;
  return r ? Number(r.serial) : 0;
}

async function version(ctx: Ctx, v: string): Promise<void> {
  await addModule(ctx.mesh, 'site', [
    { kind: 'file', path: join(ctx.root, 'index.html'), content: b64(v), mode: '0644' },
  ]);
}

Crash('PostgreSQL restarted under serve: nothing acked before it committed; serve carries on', async (ctx) => {
  await version(ctx, 'v1');
  // Serial 1 was web1's firewall, at enrolment; the assignment owes the next.
  const [first] = (
    JSON.parse(await cli(ctx.mesh, 'assign', 'site', 'web1', '--json')) as { redeclared: { serial: number }[] }
  ).redeclared;
  // Applied once first: a host holding no declaration at all waits for the
  // mesh's floor (D2), and the mesh cannot answer without its database.
  await ctx.proc.waitFor(new RegExp(`report of declaration ${first!.serial} confirmed`), 30_000);
  await until('the first report recorded', async () => (await recorded(ctx)) === first!.serial, 30_000);
  await ctx.proc.stop();
  // The module's change owes web1 its next declaration (W2), while its host is stopped.
  await version(ctx, 'v1b');
  const next = Number(
    (await ctx.mesh.store.admin`select max(serial) as s from assignment.declaration where node = 'web1'`)[0]!.s,
  );
  assert.ok(next > first!.serial, 'the change owed web1 a new declaration');
  const mark = ctx.serve.output().length;
  // The database goes away; the host comes back, applies and reports while it is gone.
  await ctx.srv.pg.stop();
  try {
    ctx.proc = ctx.host.run();
    await ctx.proc.waitFor(new RegExp(`report of declaration ${next} confirmed`), 30_000);
    await ctx.serve.waitFor(/report from \S+ not recorded \(try \d+ of \d+\), will retry/, 30_000, mark);
  } finally {
    // Back whatever happened above: the suites after this one need it.
    await ctx.srv.pg.restart();
  }
  await until(
    'the report recorded after the restart',
    async () => (await recorded(ctx).catch(() => 0)) === next,
    60_000,
  );
  // The acknowledgement is a second context's record: retried until it too commits.
  await until(
    'the declaration acknowledged',
    async () =>
      (
        await ctx.mesh.store
          .admin`select state from assignment.declaration_status where node = 'web1' and serial = ${next}`.catch(
          () => [],
        )
      )[0]?.state === 'applied',
    60_000,
  );
  assert.is(ctx.serve.child.exitCode, null, 'serve is still running');
  tally.tried++;
  tally.survived++;
  say(
    'PostgreSQL restart',
    'a report arriving while the database was down was retried, not acked, and recorded once it was back',
  );
});

Crash(
  'the broker killed with reports in flight: every confirmed report is in SQL, the rest are sent again',
  async (ctx) => {
    const mark = ctx.proc.output().length;
    const n = 6;
    for (let i = 2; i < 2 + n; i++) {
      await version(ctx, `v${i}`);
      await cli(ctx.mesh, 'declare', 'web1');
    }
    await ctx.proc.waitFor(/applied declaration/, 30_000, mark);
    await ctx.srv.rabbit.kill();
    const confirmed = [
      ...ctx.proc
        .output()
        .slice(mark)
        .matchAll(/report of declaration (\d+) confirmed/g),
    ].map((m) => Number(m[1]));
    const highestConfirmed = Math.max(0, ...confirmed);
    await ctx.srv.rabbit.resume();
    await ctx.proc.waitFor(/back in/, 60_000, mark);
    await ctx.serve.waitFor(/consuming mesh\.control/, 60_000, ctx.serve.output().lastIndexOf('lost the broker'));
    const applied = () =>
      Math.max(0, ...[...ctx.proc.output().matchAll(/applied declaration (\d+)/g)].map((m) => Number(m[1])));
    await until(
      'what the host applied is recorded',
      async () => (await recorded(ctx)) >= applied() && applied() > 0,
      60_000,
    );
    assert.ok((await recorded(ctx)) >= highestConfirmed, 'every confirmed report is in SQL');
    const lost = applied() - (await recorded(ctx));
    tally.tried++;
    tally.survived++;
    tally.lost += Math.max(0, lost);
    assert.is(lost, 0);
    say(
      'broker killed',
      `${confirmed.length} reports confirmed before the kill (up to ${highestConfirmed}); after the restart SQL holds ${await recorded(ctx)}, the host's newest: 0 lost`,
    );
  },
);

Crash('serve killed mid-stream: what it had not acked is redelivered and recorded by the next one', async (ctx) => {
  const mark = ctx.proc.output().length;
  await ctx.serve.stop('SIGKILL');
  for (let i = 20; i < 25; i++) {
    await version(ctx, `v${i}`);
    await cli(ctx.mesh, 'declare', 'web1');
  }
  const last = Number(
    (await ctx.mesh.store.admin`select max(serial) as s from assignment.declaration where node = 'web1'`)[0]!.s,
  );
  // What was declared while no serve ran is owed in SQL (W1); the next serve delivers it and records the reports.
  const [o] = await ctx.mesh.store
    .admin`select count(*)::int as n from assignment.pending_delivery where node = 'web1'`;
  assert.ok(o!.n > 0, 'owed while serve was dead');
  ctx.serve = await ctx.mesh.serve();
  await ctx.proc.waitFor(new RegExp(`applied declaration ${last}\\b`), 30_000, mark);
  await until('recorded by the new serve', async () => (await recorded(ctx)) === last, 30_000);
  tally.tried++;
  tally.survived++;
  say('serve killed', `reports sent while serve was dead were recorded by the next serve (serial ${last})`);
});

Crash('a host killed mid-apply leaves no half-written file; its next start completes the apply', async (ctx) => {
  const files = Array.from({ length: 300 }, (_, i) => ({
    kind: 'file',
    path: join(ctx.root, 'many', `f${i}`),
    content: b64(`${i}:`.padEnd(16 << 10, 'x')),
    mode: '0644',
  }));
  await addModule(ctx.mesh, 'many', files);
  await cli(ctx.mesh, 'assign', 'many', 'web1');
  const dir = join(ctx.root, 'many');
  await until('the apply under way', async () => existsSync(dir) && readdirSync(dir).length > 0, 30_000);
  ctx.proc.child.kill('SIGKILL');
  await ctx.proc.exited(10_000);
  const partial = readdirSync(dir);
  for (const f of partial) {
    if (f.startsWith('.')) continue; // a temp file, never at a declared path
    const i = Number(f.slice(1));
    assert.is(readFileSync(join(dir, f), 'utf8'), `${i}:`.padEnd(16 << 10, 'x'), `${f} is whole`);
  }
  ctx.proc = ctx.host.run();
  await until(
    'all 300 files in place',
    async () => readdirSync(dir).filter((f) => !f.startsWith('.')).length === 300,
    60_000,
  );
  for (let i = 0; i < 300; i++) assert.is(readFileSync(join(dir, `f${i}`), 'utf8'), `${i}:`.padEnd(16 << 10, 'x'));
  tally.tried++;
  tally.survived++;
  say(
    'host killed mid-apply',
    `killed with ${partial.length} of 300 files in place, none half-written; the next start completed the rest`,
  );
});

/** What waits on the control queue, as the broker admin sees it: the count,
 *  the consumers, and the routing keys of what waits (taken unacked and handed
 *  back when the channel closes, so they stay queued). */
async function controlQueue(ctx: Ctx): Promise<{ messageCount: number; consumerCount: number; keys: string[] }> {
  const r = ctx.srv.servers.rabbit;
  const conn = await adminConnect(r, ctx.mesh.vhost);
  try {
    const ch = await conn.createChannel();
    const q = await ch.checkQueue('mesh.control');
    const keys: string[] = [];
    if (q.consumerCount === 0)
      for (let m = await ch.get('mesh.control'); m; m = await ch.get('mesh.control')) keys.push(m.fields.routingKey);
    return { ...q, keys };
  } finally {
    await conn.close();
  }
}

Crash(
  'serve killed between recording heards and acking them: the batch is redelivered and recorded, nothing lost (R3)',
  async (ctx) => {
    const admin = ctx.mesh.store.admin;
    // One heard only (the one a host sends as it connects): a later one arriving
    // after the kill would be recorded by the next serve and hide a lost batch.
    await ctx.proc.stop();
    await admin`update inventory.node set last_seen = now() - interval '10 minutes' where name = 'web1'`;
    // Hold web1's row: serve's batch UPDATE waits on it, uncommitted, while heards are in its hands.
    const lock = await admin.reserve();
    await lock`begin`;
    await lock`select 1 from inventory.node where name = 'web1' for update`;
    const once = spawnProc(process.execPath, [MESH_HOST, 'run'], { ...ctx.host.env, MESH_HOST_HEARD_SECONDS: '3600' });
    try {
      await once.waitFor(/connected to/, 30_000);
      await until(
        'the heard batch waiting on the row',
        async () =>
          (
            await admin`select pid from pg_stat_activity where wait_event_type = 'Lock' and query like '%mark_heard_many%'`
          ).length > 0,
        30_000,
      );
      await ctx.serve.stop('SIGKILL');
      // The killed serve's statements must not commit later on their own: the
      // heard batch, and the host's recover, which waits on the same row.
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database() and pid <> pg_backend_pid()`;
      const q = await until(
        'the broker sees serve gone',
        async () => {
          const c = await controlQueue(ctx);
          return c.consumerCount === 0 ? c : undefined;
        },
        30_000,
      );
      // The host's recover may be held too (it can wait on the same row), so
      // what counts is that the one heard is among what came back.
      assert.is(
        q.keys.filter((k) => k === 'heard').length,
        1,
        `the heard serve held unacked is back on the control queue (waiting: ${q.keys.join(', ')})`,
      );
    } finally {
      await lock`rollback`.catch(() => {});
      lock.release();
      await once.stop();
    }
    const [before] = await admin`select state from inventory.node_status where name = 'web1'`;
    assert.match(before!.state as string, /^out of touch/, 'nothing recorded them yet');
    ctx.serve = await ctx.mesh.serve();
    await until(
      'the redelivered heards recorded',
      async () => (await admin`select state from inventory.node_status where name = 'web1'`)[0]!.state === 'here',
      30_000,
    );
    ctx.proc = ctx.host.run();
    await ctx.proc.waitFor(/connected to/, 30_000);
    tally.tried++;
    tally.survived++;
    say(
      'serve killed mid-heard',
      'heards in a batch serve had not committed were redelivered and recorded by the next serve',
    );
  },
);

Crash.after(() => summary('crash'));
Crash.run();
