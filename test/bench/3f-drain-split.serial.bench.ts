// serve's drain at bench 3's fleet, its steps apart (in process): each batch
// taken, published with confirms, marked delivered and committed in turn on
// one lane, each step timed, with PostgreSQL's and this process's CPU beside
// it; then the same drain in serve's shape (DRAIN_LANES lanes). Two ways to
// take a batch take turns in one run (the machine is shared: compare within a
// run, never across): `rows`, one result row an owed row (take_owed as 0024
// had it, put back beside the new one by the admin as take_owed_rows), and
// `one`, the batch as one row (take_owed since 0028: ids, nodes, serials as
// arrays and the envelopes as one value, cut by their sizes in Node).
import { freshMesh } from '../harness/mesh.js';
import { declare } from '../../src/assignment/declare.js';
import { connect, type Sql } from '../../src/store/connect.js';
import { PUBLISH_CHANNELS, DRAIN_LANES, DRAIN_BATCH } from '../../src/serve/drain.js';
import { publish } from '../../src/broker/publish.js';
import { queueOf } from '../../src/wire/names.js';
import { publishAll } from './steps.js';
import type { ConfirmChannel } from 'amqplib';
import { bench, now, envInt, tempDir, removeDir, insertNodes, perNodeFiles, createQueues, purgeQueues, admin, cpuMeter, serverPids, settle, figure } from './lib.js';

const N = envInt('MESH_BENCH_FANOUT_NODES', 10_000);
const ROUNDS = envInt('MESH_PROBE_ROUNDS', 2);
const WAYS = (process.env.MESH_PROBE_WAYS ?? 'rows,one').split(',');

// take_owed as sql/assignment/0024 defined it, under its own name.
const ROWS_TAKE = `create or replace function assignment.take_owed_rows(limit_rows integer, due_by timestamptz) returns table (id bigint, node text, kind text, serial bigint, payload bytea)
language sql as $$
  with owed as (
    select o.id, o.node, o.kind, o.serial from assignment.outbox o
     where o.delivered_at is null and o.next_attempt_at <= due_by
     order by o.id limit limit_rows
     for update skip locked)
  select w.id, w.node, w.kind, w.serial, d.envelope
    from owed w join assignment.declaration d on d.node = w.node and d.serial = w.serial
   order by w.id
$$`;

interface Batch { ids: string[]; nodes: string[]; kinds: string[]; serials: string[]; bodies: Buffer[] }

const TAKE: Record<string, (tx: Sql, n: number) => Promise<Batch>> = {
  async rows(tx, n) {
    const rows = await tx`select id, node, kind, serial, convert_from(payload, 'UTF8') as payload from assignment.take_owed_rows(${n}, now())`;
    return { ids: rows.map((r) => String(r.id)), nodes: rows.map((r) => r.node as string), kinds: rows.map((r) => r.kind as string),
      serials: rows.map((r) => String(r.serial)), bodies: rows.map((r) => Buffer.from(r.payload as string, 'utf8')) };
  },
  async one(tx, n) {
    const [b] = await tx`select ids::text[] as ids, nodes, kinds, serials::text[] as serials, sizes, envelopes from assignment.take_owed(${n}, now())`;
    if (!b) return { ids: [], nodes: [], kinds: [], serials: [], bodies: [] };
    const all = Buffer.from(b.envelopes as string, 'utf8');
    let at = 0;
    const bodies = (b.sizes as number[]).map((s) => all.subarray(at, (at += s)));
    return { ids: b.ids as string[], nodes: b.nodes as string[], kinds: b.kinds as string[], serials: b.serials as string[], bodies };
  },
};

async function publishBatch(chs: ConfirmChannel[], b: Batch): Promise<string[]> {
  const ok: string[] = [];
  await Promise.all(b.ids.map(async (id, i) => {
    await publish(chs[i % chs.length]!, '', queueOf(b.nodes[i]!), b.bodies[i]!,
      { mandatory: true, persistent: false, messageId: `${b.nodes[i]}:${b.serials[i]}`, type: b.kinds[i], contentType: 'application/json' });
    ok.push(id);
  }));
  return ok;
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
    await mesh.store.admin.unsafe(ROWS_TAKE);
    const conn = await admin(mesh);
    const chs = await Promise.all(Array.from({ length: PUBLISH_CHANNELS }, () => conn.createConfirmChannel()));
    const rabbit = serverPids().rabbit;
    const meter = () => cpuMeter({ postgres: () => serverPids().pg, rabbitmq: () => rabbit, self: () => [process.pid] });
    const sums: Record<string, number[]> = {};
    const note = (k: string, v: number) => { (sums[k] ??= []).push(v); };
    for (let r = 0; r < ROUNDS; r++) {
      for (const way of WAYS) {
        const take = TAKE[way]!;
        // One lane, the steps timed apart.
        await declare({ signer: mesh.signer });
        await settle(rabbit);
        if (r === 0) {
          const fn = way === 'rows' ? 'take_owed_rows' : 'take_owed';
          const plan = await mesh.store.admin.unsafe(`explain (analyze, buffers, verbose) select * from assignment.${fn}(${DRAIN_BATCH}, now())`);
          console.log(`[split] ${way} explain analyze:\n${plan.map((p) => Object.values(p)[0]).join('\n')}`);
        }
        const t = { take: 0, publish: 0, mark: 0, commit: 0 };
        let total = 0;
        const m = meter();
        const t0 = now();
        for (;;) {
          let c0 = 0;
          const n = await asg.begin(async (tx) => {
            let a = now();
            const b = await take(tx as unknown as Sql, DRAIN_BATCH);
            t.take += now() - a; a = now();
            if (b.ids.length === 0) return 0;
            const ok = await publishBatch(chs, b);
            t.publish += now() - a; a = now();
            await tx`select assignment.mark_delivered(${ok}::text[]::bigint[])`;
            t.mark += now() - a;
            c0 = now();
            return ok.length;
          });
          if (c0) t.commit += now() - c0;
          total += n;
          if (n < DRAIN_BATCH) break;
        }
        const secs = (now() - t0) / 1000;
        const c = m.stop();
        if (total !== N) throw new Error(`drained ${total} of ${N}`);
        console.log(`[split] round ${r} ${way}, one lane: ${(total / secs).toFixed(0)}/s; ms a batch: take ${(t.take / (N / DRAIN_BATCH)).toFixed(1)}, publish+confirm ${(t.publish / (N / DRAIN_BATCH)).toFixed(1)}, mark ${(t.mark / (N / DRAIN_BATCH)).toFixed(1)}, commit ${(t.commit / (N / DRAIN_BATCH)).toFixed(1)}; pg ${(c.cores.postgres! * c.seconds * 1000 / N).toFixed(3)} ms/row, self ${(c.cores.self! * c.seconds * 1000 / N).toFixed(3)} ms/row, rabbit ${(c.cores.rabbitmq! * c.seconds * 1000 / N).toFixed(3)} ms/row`);
        for (const [k, v] of Object.entries(t)) note(`${way} ${k} ms/batch`, v / (N / DRAIN_BATCH));
        await purgeQueues(mesh, names);

        // Serve's shape: lanes, each batch its own transaction.
        await declare({ signer: mesh.signer });
        await settle(rabbit);
        const m2 = meter();
        const t1 = now();
        let done = 0;
        await Promise.all(Array.from({ length: DRAIN_LANES }, async () => {
          for (;;) {
            const n = await asg.begin(async (tx) => {
              const b = await take(tx as unknown as Sql, DRAIN_BATCH);
              if (b.ids.length === 0) return 0;
              const ok = await publishBatch(chs, b);
              await tx`select assignment.mark_delivered(${ok}::text[]::bigint[])`;
              return ok.length;
            });
            done += n;
            if (n < DRAIN_BATCH) break;
          }
        }));
        const s2 = (now() - t1) / 1000;
        const c2 = m2.stop();
        if (done !== N) throw new Error(`drained ${done} of ${N}`);
        note(`${way} lanes /s`, N / s2);
        console.log(`[split] round ${r} ${way}, ${DRAIN_LANES} lanes: ${(N / s2).toFixed(0)}/s; pg ${(c2.cores.postgres! * c2.seconds * 1000 / N).toFixed(3)} ms/row, self ${(c2.cores.self! * c2.seconds * 1000 / N).toFixed(3)} ms/row, rabbit ${(c2.cores.rabbitmq! * c2.seconds * 1000 / N).toFixed(3)} ms/row`);
        await purgeQueues(mesh, names);
      }
      const rows = await asg`select d.node, d.envelope from assignment.declaration d join assignment.node_serial s on s.node = d.node and s.serial = d.serial order by d.node`;
      await settle(rabbit);
      const m3 = meter();
      const rate = await publishAll(chs, rows.map((x) => x.node as string), rows.map((x) => x.envelope as Buffer), false);
      const c3 = m3.stop();
      note('raw publish+confirm /s', rate);
      console.log(`[split] round ${r} raw: ${rate.toFixed(0)}/s; self ${(c3.cores.self! * c3.seconds * 1000 / N).toFixed(3)} ms/row, rabbit ${(c3.cores.rabbitmq! * c3.seconds * 1000 / N).toFixed(3)} ms/row`);
      await purgeQueues(mesh, names);
    }
    for (const [k, v] of Object.entries(sums)) figs.push(figure({ id: `split.${k}`, what: k, value: v.reduce((a, b) => a + b, 0) / v.length, unit: k.endsWith('/s') ? '/s' : 'ms' }));
    await conn.close();
    await asg.end();
  } finally {
    await mesh.stop().catch(() => {});
    removeDir(root);
  }
});
