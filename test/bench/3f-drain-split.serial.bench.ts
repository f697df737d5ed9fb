// serve's drain at bench 3's fleet, in process, the changes of wt-drain apart
// and taking turns in one run (the machine is shared: compare within a run,
// never across). Ways:
//   before  mark_delivered as 0008 had it (`and delivered_at is null`), lanes
//           started together;
//   mark    the same with mark_delivered as 0028 has it (by primary key alone);
//   after   serve's drainOnce as it is: 0028's mark, the lanes taking in turn
//           (takeTurns).
// Each way: a declare() of all 10,000, drained on one lane with each batch's
// steps timed (take, publish+confirm, mark, commit), then again, drained in
// serve's shape (DRAIN_LANES lanes of DRAIN_BATCH). The old mark is put back
// beside the new by the admin under its own name. The round's first way
// drains an outbox PostgreSQL has no statistics for (as bench 3's first
// declare --all does): its mark is the one to read for the old plan. PostgreSQL's, the
// broker's and this process's CPU a row beside each.
import { freshMesh } from '../harness/mesh.js';
import { declare } from '../../src/assignment/declare.js';
import { connect, type Sql } from '../../src/store/connect.js';
import { PUBLISH_CHANNELS, DRAIN_LANES, DRAIN_BATCH, drainOnce, takeTurns, type TakeTurn } from '../../src/serve/drain.js';
import { publish } from '../../src/broker/publish.js';
import { queueOf } from '../../src/wire/names.js';
import { publishAll } from './steps.js';
import type { ConfirmChannel } from 'amqplib';
import { bench, now, envInt, tempDir, removeDir, insertNodes, perNodeFiles, createQueues, purgeQueues, admin, cpuMeter, serverPids, settle, figure } from './lib.js';

const N = envInt('MESH_BENCH_FANOUT_NODES', 10_000);
const ROUNDS = envInt('MESH_PROBE_ROUNDS', 2);
const WAYS = (process.env.MESH_PROBE_WAYS ?? 'before,mark,after').split(',');

// mark_delivered as sql/assignment/0008 defined it, under its own name.
const OLD = [`create or replace function assignment.mark_delivered_old(ids bigint[]) returns void language sql as $$
  update assignment.outbox set delivered_at = now(), last_error = null where id = any(ids) and delivered_at is null
$$`];

interface Steps { take: number; publish: number; mark: number; commit: number }

/** One batch as drainOnce takes and publishes it, with the mark asked for, each step timed into STEPS when given. */
async function oldBatch(sql: Sql, chs: ConfirmChannel[], newMark: boolean, turn?: TakeTurn, steps?: Steps): Promise<number> {
  let c0 = 0;
  const n = await sql.begin(async (tx) => {
    let a = now();
    const handOn = await turn?.();
    const rows = await tx`select id, node, kind, serial, convert_from(payload, 'UTF8') as payload from assignment.take_owed(${DRAIN_BATCH}, now())`;
    handOn?.();
    if (steps) { steps.take += now() - a; a = now(); }
    if (rows.length === 0) return 0;
    const ok: string[] = [];
    await Promise.all(rows.map(async (r, i) => {
      await publish(chs[i % chs.length]!, '', queueOf(r.node as string), Buffer.from(r.payload as string, 'utf8'),
        { mandatory: true, persistent: false, messageId: `${r.node}:${r.serial}`, type: r.kind as string, contentType: 'application/json' });
      ok.push(String(r.id));
    }));
    if (steps) { steps.publish += now() - a; a = now(); }
    if (newMark) await tx`select assignment.mark_delivered(${ok}::text[]::bigint[])`;
    else await tx`select assignment.mark_delivered_old(${ok}::text[]::bigint[])`;
    if (steps) steps.mark += now() - a;
    c0 = now();
    return ok.length;
  });
  if (steps && c0) steps.commit += now() - c0;
  return n;
}

function batchOf(way: string, sql: Sql, chs: ConfirmChannel[], turn: TakeTurn, steps?: Steps): Promise<number> {
  if (way === 'before') return oldBatch(sql, chs, false, undefined, steps);
  if (way === 'mark') return oldBatch(sql, chs, true, undefined, steps);
  if (steps) return oldBatch(sql, chs, true, turn, steps);
  // after: serve's own.
  return drainOnce(sql, chs, { batch: DRAIN_BATCH, turn }).then((r) => r.delivered);
}

await bench('3f drain split', async (figs) => {
  const mesh = await freshMesh();
  const root = tempDir('split-root');
  try {
    const names = await insertNodes(mesh, N, { sites: 100, hubs: 2 });
    await perNodeFiles(mesh, root);
    await createQueues(mesh, names);
    Object.assign(process.env, mesh.env);
    const asg = await connect('assignment', { env: mesh.env, max: 8 });
    for (const f of OLD) await mesh.store.admin.unsafe(f);
    const conn = await admin(mesh);
    const chs = await Promise.all(Array.from({ length: PUBLISH_CHANNELS }, () => conn.createConfirmChannel()));
    const rabbit = serverPids().rabbit;
    const meter = () => cpuMeter({ postgres: () => serverPids().pg, rabbitmq: () => rabbit, self: () => [process.pid] });
    const perRow = (c: ReturnType<ReturnType<typeof meter>['stop']>, k: string) => (c.cores[k]! * c.seconds * 1000 / N).toFixed(3);
    const sums: Record<string, number[]> = {};
    const note = (k: string, v: number) => { (sums[k] ??= []).push(v); };
    const batches = Math.ceil(N / DRAIN_BATCH);
    for (let r = 0; r < ROUNDS; r++) {
      for (const way of WAYS) {
        // One lane, the steps timed apart.
        await declare({ signer: mesh.signer });
        await settle(rabbit);
        const t: Steps = { take: 0, publish: 0, mark: 0, commit: 0 };
        let total = 0;
        const m = meter();
        const t0 = now();
        for (;;) {
          const n = await batchOf(way, asg, chs, takeTurns(), t);
          total += n;
          if (n < DRAIN_BATCH) break;
        }
        const secs = (now() - t0) / 1000;
        const c = m.stop();
        if (total !== N) throw new Error(`drained ${total} of ${N}`);
        const split = `; ms a batch: take ${(t.take / batches).toFixed(1)}, publish+confirm ${(t.publish / batches).toFixed(1)}, mark ${(t.mark / batches).toFixed(1)}, commit ${(t.commit / batches).toFixed(1)}`;
        console.log(`[split] round ${r} ${way}, one lane: ${(total / secs).toFixed(0)}/s${split}; cpu ms a row: pg ${perRow(c, 'postgres')}, self ${perRow(c, 'self')}, rabbit ${perRow(c, 'rabbitmq')}`);
        for (const [k, v] of Object.entries(t)) note(`${way} ${k} ms a batch, one lane`, v / batches);
        note(`${way} one lane /s`, total / secs);
        await purgeQueues(mesh, names);

        // Serve's shape: lanes, each batch its own transaction.
        await declare({ signer: mesh.signer });
        await settle(rabbit);
        const m2 = meter();
        const t1 = now();
        let done = 0;
        const turn = takeTurns();
        await Promise.all(Array.from({ length: DRAIN_LANES }, async () => {
          for (;;) {
            const n = await batchOf(way, asg, chs, turn);
            done += n;
            if (n < DRAIN_BATCH) break;
          }
        }));
        const s2 = (now() - t1) / 1000;
        const c2 = m2.stop();
        if (done !== N) throw new Error(`drained ${done} of ${N}`);
        note(`${way} ${DRAIN_BATCH}x${DRAIN_LANES} /s`, N / s2);
        for (const k of ['postgres', 'self', 'rabbitmq']) note(`${way} ${DRAIN_BATCH}x${DRAIN_LANES} ${k} cpu ms a row`, Number(perRow(c2, k)));
        console.log(`[split] round ${r} ${way}, ${DRAIN_LANES} lanes: ${(N / s2).toFixed(0)}/s; cpu ms a row: pg ${perRow(c2, 'postgres')}, self ${perRow(c2, 'self')}, rabbit ${perRow(c2, 'rabbitmq')}; machine ${(c2.machineBusy * 100).toFixed(0)}% busy`);
        await purgeQueues(mesh, names);
      }
      const rows = await asg`select d.node, d.envelope from assignment.declaration d join assignment.node_serial s on s.node = d.node and s.serial = d.serial order by d.node`;
      await settle(rabbit);
      const m3 = meter();
      const rate = await publishAll(chs, rows.map((x) => x.node as string), rows.map((x) => x.envelope as Buffer), false);
      const c3 = m3.stop();
      note('raw publish+confirm /s', rate);
      console.log(`[split] round ${r} raw: ${rate.toFixed(0)}/s; cpu ms a row: self ${perRow(c3, 'self')}, rabbit ${perRow(c3, 'rabbitmq')}`);
      await purgeQueues(mesh, names);
    }
    for (const [k, v] of Object.entries(sums)) figs.push(figure({ id: `split.${k}`, what: `${k} (mean of ${v.length})`, value: v.reduce((a, b) => a + b, 0) / v.length, unit: k.endsWith('/s') ? '/s' : 'ms' }));
    await conn.close();
    await asg.end();
  } finally {
    await mesh.stop().catch(() => {});
    removeDir(root);
  }
});
