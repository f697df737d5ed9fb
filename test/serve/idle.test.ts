// Idle cost: with nothing owed, `mesh serve` does no SQL work
// beyond the outbox's periodic sweep, one query on the owed rows' partial index
// (assignment.owed_now). Shown from PostgreSQL's own counters for this
// database: over several sweeps, no table is read or written but the outbox,
// and the outbox only through that index. Hosts are joined (their history is
// in the tables the sweep must not read) and told to stay quiet. Those
// counters cannot tell one query on that index from two, so the database also
// counts function calls (track_functions): the drain's taking function,
// take_owed, is never called while owed_now says nothing is owed, and is
// called once something is.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { freshMesh, type Mesh } from '../harness/mesh.js';

const SWEEP_SECONDS = 1;
const I = suite<{ mesh: Mesh }>('serve idle: the sweep and nothing else');
I.before(async (ctx) => {
  ctx.mesh = await freshMesh({ serveEnv: { MESH_SERVE_SWEEP_SECONDS: String(SWEEP_SECONDS) } });
  // Every session opened from now on (serve's among them) counts its calls of SQL functions too.
  const [{ db }] = (await ctx.mesh.store.admin`select current_database() as db`) as unknown as [{ db: string }];
  await ctx.mesh.store.admin.unsafe(`alter database "${db.replace(/"/g, '""')}" set track_functions = 'all'`);
});
I.after(async (ctx) => {
  await ctx.mesh.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every user table's and index's counters, one line each (a change in any line is work done). */
async function counters(mesh: Mesh): Promise<Map<string, string>> {
  const a = mesh.store.admin;
  // A fresh read of the shared statistics, not this session's cached snapshot.
  await a`select pg_stat_clear_snapshot()`;
  const t = await a`select schemaname || '.' || relname as name,
                           concat_ws(' ', seq_scan, coalesce(idx_scan, 0), n_tup_ins, n_tup_upd, n_tup_del) as c
                      from pg_stat_user_tables`;
  const i =
    await a`select schemaname || '.' || relname || ' index ' || indexrelname as name, idx_scan::text as c from pg_stat_user_indexes`;
  return new Map([...t, ...i].map((r) => [r.name as string, r.c as string]));
}

/** Calls of every function in the assignment schema, as PostgreSQL counted them. */
async function calls(mesh: Mesh): Promise<Map<string, number>> {
  const a = mesh.store.admin;
  await a`select pg_stat_clear_snapshot()`;
  const r = await a`select funcname, calls from pg_stat_user_functions where schemaname = 'assignment'`;
  return new Map(r.map((x) => [x.funcname as string, Number(x.calls)]));
}

I(
  "with nothing owed, serve reads only the outbox's owed index, once a sweep, and the freeze windows",
  async ({ mesh }) => {
    await mesh.serve();
    // Quiet hosts: no heard or reconcile within the test (a heard is work that came in, not idle cost).
    const quiet = { MESH_HOST_HEARD_SECONDS: '3600', MESH_HOST_RECONCILE_SECONDS: '3600' };
    for (const n of ['n1', 'n2']) await mesh.joined(n, quiet);
    // Everything owed delivered, and each node's newest applied and reported.
    for (let i = 0; ; i++) {
      const [r] = await mesh.store.admin`select (select count(*) from assignment.pending_delivery)::int as owed,
                                              (select count(*) from assignment.node_serial s where not exists (select 1 from assignment.declaration d
                                                 where d.node = s.node and d.serial = s.serial and d.acknowledged_at is not null))::int as unacked`;
      if (r!.owed === 0 && r!.unacked === 0) break;
      if (i > 600) throw new Error(`never idle: ${r!.owed} owed, ${r!.unacked} unacknowledged`);
      await sleep(100);
    }
    // A backend publishes its counters at most 10 s after its last work (PostgreSQL 15): let every one settle.
    await sleep(11_000);
    const before = await counters(mesh);
    const calledBefore = await calls(mesh);
    await sleep(6 * SWEEP_SECONDS * 1000);
    const after = await counters(mesh);
    const calledAfter = await calls(mesh);
    const moved = [...after]
      .filter(([k, v]) => before.get(k) !== v)
      .map(([k]) => k)
      .sort();
    const owedIndex = 'assignment.outbox index outbox_owed';
    assert.ok(moved.includes(owedIndex), `the sweep ran (the owed index was read): moved ${moved.join(', ')}`);
    // Beside the sweep, serve ends each change-freeze window whose time is up: one small query on that table.
    const freezes = (k: string) => k === 'assignment.freeze' || k.startsWith('assignment.freeze index ');
    assert.equal(
      moved.filter((k) => k !== owedIndex && k !== 'assignment.outbox' && !freezes(k)),
      [],
      "nothing but the outbox's owed index and the freeze windows was read or written",
    );
    const [seqBefore, , ins, upd, del] = before.get('assignment.outbox')!.split(' ');
    const [seqAfter, , ins2, upd2, del2] = after.get('assignment.outbox')!.split(' ');
    assert.equal(
      [seqAfter, ins2, upd2, del2],
      [seqBefore, ins, upd, del],
      'the outbox is neither scanned whole nor written',
    );
    // One query a sweep, not two: asked, and nothing taken.
    assert.ok(
      (calledAfter.get('owed_now') ?? 0) > (calledBefore.get('owed_now') ?? 0),
      `the sweep asked owed_now: ${JSON.stringify([...calledAfter])}`,
    );
    assert.is(
      calledAfter.get('take_owed') ?? 0,
      calledBefore.get('take_owed') ?? 0,
      'take_owed was called while nothing was owed',
    );

    // Something owed, behind serve's back (no notify): the next sweep takes it, so the count above could have moved.
    // n1's newest declaration owed again: the host drops what is not newer.
    await mesh.store
      .admin`insert into assignment.outbox (node, kind, serial) select node, 'declaration', serial from assignment.node_serial where node = 'n1'`;
    let taken = calledAfter.get('take_owed') ?? 0;
    for (let i = 0; i < 300 && taken === (calledAfter.get('take_owed') ?? 0); i++) {
      await sleep(100);
      taken = (await calls(mesh)).get('take_owed') ?? 0;
    }
    assert.ok(
      taken > (calledAfter.get('take_owed') ?? 0),
      'once something is owed the sweep calls take_owed (so its count is seen at all)',
    );
  },
);

I.run();
