// The store's standby: a primary and a synchronous streaming
// standby set up by the bundle's replication code, `mesh serve` and every
// command on the host list; the primary dies (immediate: a crash) while
// serve runs, `mesh store promote` makes the standby primary, and serve
// carries on without a restart. No commit any program was told of is lost.
// Serial: it runs two clusters of its own and kills one.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { replicated, type Replicated } from '../harness/replicated.js';
import { freshMesh, type Mesh, type Proc, type CliResult } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { storeVariable } from '../../src/store/contexts.js';
import { standbySlot } from '../../bundle/replication.js';
import { run } from '../../src/sys/proc.js';

interface Ctx {
  r: Replicated;
  mesh: Mesh;
  serve: Proc;
  hosts: Proc[];
}
const Failover = suite<Ctx>('a promoted standby: serve carries on, no committed row lost');

Failover.before(async (ctx) => {
  ctx.r = await replicated().catch((e) => {
    console.error(e);
    throw e;
  });
  ctx.mesh = await freshMesh({ store: ctx.r.store, serveEnv: { MESH_SERVE_SWEEP_SECONDS: '1' } });
  ctx.serve = await ctx.mesh.serve();
  ctx.hosts = [];
  for (const n of ['a', 'b']) ctx.hosts.push((await ctx.mesh.joined(n)).proc);
});
Failover.after(async (ctx) => {
  await ctx.mesh?.stop();
  await ctx.r?.stop();
});

/** A superuser query on whichever server is primary now; a connection cut by the crash is opened again. */
async function onPrimary<T>(mesh: Mesh, q: (sql: Mesh['store']['admin']) => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await q(mesh.store.admin);
    } catch (err) {
      if (i > 100) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

async function waitUntil(what: string, ok: () => Promise<boolean>, tries = 600): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`never happened: ${what}`);
}

Failover('the primary is synchronous with its standby: a commit returns once the standby has it', async ({ r }) => {
  const p = r.su(r.primary);
  const [s] =
    await p`select current_setting('synchronous_commit') as commit, current_setting('synchronous_standby_names') as names`;
  assert.is(s!.commit, 'on');
  const [rep] =
    await p`select sync_state, state from pg_stat_replication where application_name = ${standbySlot(r.name)}`;
  assert.equal({ sync: rep?.sync_state, state: rep?.state }, { sync: 'sync', state: 'streaming' });
  const [slot] = await p`select active from pg_replication_slots where slot_name = ${standbySlot(r.name)}`;
  assert.ok(slot?.active, 'the standby streams through its slot');
});

Failover(
  "the standby gets in with the passfile's password only: without it the primary refuses the replication role",
  async ({ r }) => {
    // The same connection pg_basebackup made, without the passfile.
    const conn = `host=127.0.0.1 port=${r.primary.port} user=mesh_replication dbname=replication replication=true`;
    const argv = ['-d', conn, '-c', 'IDENTIFY_SYSTEM', '--no-password'];
    const [cmd, args] =
      process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', '/usr/bin/psql', ...argv]] : ['psql', argv];
    const refused = await run(cmd, args, { env: { ...process.env, PGPASSFILE: '/dev/null' } }).then(
      () => false,
      (e: Error) => /password|authentication/i.test(e.message),
    );
    assert.ok(refused, 'no password, no stream');
    const [cmd2, args2] =
      process.getuid?.() === 0
        ? [
            'runuser',
            [
              '-u',
              'postgres',
              '--',
              '/usr/bin/psql',
              '-d',
              `${conn} passfile=${r.passfile}`,
              '-c',
              'IDENTIFY_SYSTEM',
              '--no-password',
            ],
          ]
        : ['psql', ['-d', `${conn} passfile=${r.passfile}`, '-c', 'IDENTIFY_SYSTEM', '--no-password']];
    await run(cmd2, args2);
  },
);

Failover(
  'a host list with the standby first still lands every connection on the primary (target_session_attrs=read-write)',
  async ({ r, mesh }) => {
    const url = mesh.store.env[storeVariable('inventory')]!;
    const swapped = url.replace(
      `127.0.0.1:${r.primary.port},127.0.0.1:${r.standby.port}`,
      `127.0.0.1:${r.standby.port},127.0.0.1:${r.primary.port}`,
    );
    assert.is.not(swapped, url);
    const sql = await connect('inventory', { env: { [storeVariable('inventory')]: swapped }, max: 3 });
    try {
      const rows = await Promise.all(
        [1, 2, 3].map(() => sql`select pg_is_in_recovery() as standby, inet_server_port() as port`),
      );
      for (const [row] of rows)
        assert.equal({ standby: row!.standby, port: row!.port }, { standby: false, port: r.primary.port });
    } finally {
      await sql.end();
    }
  },
);

Failover(
  'the primary crashes mid-commit and the standby is promoted: every commit a command was told of is there, serve carries on',
  async ({ r, mesh, serve, hosts }) => {
    const committed: string[] = [];
    for (let i = 0; i < 5; i++) {
      const t = await mesh.cli(['token', 'issue', `t${i}`]);
      assert.is(t.code, 0, t.stderr);
      committed.push(`t${i}`);
    }
    const before = await onPrimary(
      mesh,
      (
        a,
      ) => a`select (select count(*) from inventory.node)::int as nodes, (select count(*) from assignment.declaration)::int as declarations,
    (select count(*) from inventory.report)::int as reports`,
    );
    // The primary stops sending WAL (its walsender frozen), then a command commits: with
    // synchronous replication that commit waits for the standby and is never reported done;
    // with asynchronous it would be reported done, and lost with the primary.
    const p = r.su(r.primary);
    const [ws] = await p`select pid from pg_stat_replication where application_name = ${standbySlot(r.name)}`;
    process.kill(Number(ws!.pid), 'SIGSTOP');
    const late: Promise<CliResult> = mesh.cli(['token', 'issue', 'late']);
    let lateResult: CliResult | undefined;
    void late.then((x) => {
      lateResult = x;
    });
    await waitUntil(
      'the late commit waits for the standby, or returns',
      async () =>
        lateResult !== undefined ||
        (await p`select count(*)::int as n from pg_stat_activity where wait_event = 'SyncRep'`)[0]!.n > 0,
    );
    // The crash: no checkpoint, every client cut off, the frozen walsender killed with the rest.
    await r.primary.stopMode('immediate');
    const lateDone = await late;
    if (lateDone.code === 0) committed.push('late');
    const promoted = await mesh.cli(['store', 'promote', '--data', r.standby.data, '--json']);
    assert.is(promoted.code, 0, promoted.stderr);
    const after = await onPrimary(
      mesh,
      (a) => a`select pg_is_in_recovery() as standby, inet_server_port() as port,
    (select count(*) from assignment.declaration)::int as declarations, (select count(*) from inventory.report)::int as reports,
    array(select name from inventory.node order by name) as nodes`,
    );
    assert.equal({ standby: after[0]!.standby, port: after[0]!.port }, { standby: false, port: r.standby.port });
    // Promoted, it runs alone: waiting for a standby of its own would hang every commit.
    const [alone] = await onPrimary(mesh, (a) => a`select current_setting('synchronous_standby_names') as names`);
    assert.is(alone!.names, '');
    const nodes = after[0]!.nodes as string[];
    for (const n of committed) assert.ok(nodes.includes(n), `token ${n} was reported issued and is on the new primary`);
    assert.ok(nodes.length >= before[0]!.nodes, 'no node lost');
    assert.ok(after[0]!.declarations >= before[0]!.declarations, 'no declaration lost');
    assert.ok(after[0]!.reports >= before[0]!.reports, 'no report lost');

    // serve, never restarted, drains what a command owes on the new primary and records the reports.
    const from = hosts.map((h) => h.output().length);
    const d = await mesh.cli(['declare', '--all', '--json']);
    assert.is(d.code, 0, d.stderr);
    const newest = await onPrimary(
      mesh,
      (a) =>
        a`select node, max(serial)::int as serial from assignment.declaration where node in ('a', 'b') group by node`,
    );
    await Promise.all(hosts.map((h, i) => h.waitFor(/report of declaration \d+ confirmed/, 60_000, from[i])));
    await waitUntil('a and b report their newest declarations', async () => {
      const rows = await onPrimary(
        mesh,
        (a) => a`select name, reported_serial::int as serial from inventory.node_status where name in ('a', 'b')`,
      );
      return rows.every((x) => newest.some((n) => n.node === x.name && n.serial === x.serial));
    });
    // And it answers an enrolment: a token spent and keys recorded on the new primary.
    const c = await mesh.joined('c');
    await c.proc.waitFor(/report of declaration \d+ confirmed/, 60_000);
    await waitUntil(
      'c reported',
      async () =>
        (await onPrimary(mesh, (a) => a`select count(*)::int as n from inventory.report where node = 'c'`))[0]!.n === 1,
    );
    assert.is(serve.child.exitCode, null, 'serve kept running');
  },
);

Failover.run();
