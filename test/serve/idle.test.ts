// Idle cost (issue 17): with nothing owed, `mesh serve` does no SQL work
// beyond the outbox's periodic sweep, one query on the owed rows' partial index
// (assignment.owed_now). Shown from PostgreSQL's own counters for this
// database: over several sweeps, no table is read or written but the outbox,
// and the outbox only through that index. Hosts are joined (their history is
// in the tables the sweep must not read) and told to stay quiet.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { freshMesh, type Mesh } from '../harness/mesh.js';

const SWEEP_SECONDS = 1;
const I = suite<{ mesh: Mesh }>('serve idle: the sweep and nothing else');
I.before(async (ctx) => { ctx.mesh = await freshMesh({ serveEnv: { MESH_SERVE_SWEEP_SECONDS: String(SWEEP_SECONDS) } }); });
I.after(async (ctx) => { await ctx.mesh.stop(); });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every user table's and index's counters, one line each (a change in any line is work done). */
async function counters(mesh: Mesh): Promise<Map<string, string>> {
  const a = mesh.store.admin;
  // A fresh read of the shared statistics, not this session's cached snapshot.
  await a`select pg_stat_clear_snapshot()`;
  const t = await a`select schemaname || '.' || relname as name,
                           concat_ws(' ', seq_scan, coalesce(idx_scan, 0), n_tup_ins, n_tup_upd, n_tup_del) as c
                      from pg_stat_user_tables`;
  const i = await a`select schemaname || '.' || relname || ' index ' || indexrelname as name, idx_scan::text as c from pg_stat_user_indexes`;
  return new Map([...t, ...i].map((r) => [r.name as string, r.c as string]));
}

I('with nothing owed, serve reads only the outbox\'s owed index, once a sweep', async ({ mesh }) => {
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
  await sleep(6 * SWEEP_SECONDS * 1000);
  const after = await counters(mesh);
  const moved = [...after].filter(([k, v]) => before.get(k) !== v).map(([k]) => k).sort();
  const owedIndex = 'assignment.outbox index outbox_owed';
  assert.ok(moved.includes(owedIndex), `the sweep ran (the owed index was read): moved ${moved.join(', ')}`);
  assert.equal(moved.filter((k) => k !== owedIndex && k !== 'assignment.outbox'), [], 'nothing but the outbox\'s owed index was read or written');
  const [seqBefore, , ins, upd, del] = before.get('assignment.outbox')!.split(' ');
  const [seqAfter, , ins2, upd2, del2] = after.get('assignment.outbox')!.split(' ');
  assert.equal([seqAfter, ins2, upd2, del2], [seqBefore, ins, upd, del], 'the outbox is neither scanned whole nor written');
});

I.run();
