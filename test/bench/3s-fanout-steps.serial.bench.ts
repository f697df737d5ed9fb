// Bench 3's steps apart, in process, each A/B in the same run (the machine is
// shared: compare within a run, never across): recording 10,000 declarations
// and committing them (the audit chain's trigger, 0001 against 0004), and
// serve's drain of them (take_owed, 0012 against 0024), old and new taking
// turns. Old definitions are put back by the admin between rounds.
import { createHash } from 'node:crypto';
import { freshMesh } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { envelope } from '../../src/assignment/declare.js';
import { drainOnce, PUBLISH_CHANNELS, DRAIN_LANES, DRAIN_BATCH } from '../../src/serve/drain.js';
import { bodyText, fresh } from '../../src/wire/declaration.js';
import { bench, now, envInt, tempDir, removeDir, insertNodes, perNodeFiles, createQueues, purgeQueues, admin, cpuMeter, serverPids, figure } from './lib.js';

const N = envInt('MESH_BENCH_FANOUT_NODES', 10_000);
const ROUNDS = envInt('MESH_PROBE_ROUNDS', 4);

const OLD: Record<string, string> = {
  take_owed: `create or replace function assignment.take_owed(limit_rows integer, due_by timestamptz) returns table (id bigint, node text, kind text, serial bigint, payload bytea)
language sql as $$
  select o.id, o.node, o.kind, o.serial, d.envelope from assignment.outbox o
    join assignment.declaration d on d.node = o.node and d.serial = o.serial
   where o.delivered_at is null and o.next_attempt_at <= due_by
   order by o.id limit limit_rows
   for update of o skip locked
$$`,
  on_declaration: `create or replace function audit.on_declaration() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
begin
  perform audit.append('declared', new.node, jsonb_build_object('serial', new.serial, 'digest', encode(new.digest, 'hex')));
  return null;
end $$`,
};

await bench('3s fan-out steps', async (figs) => {
  const mesh = await freshMesh();
  const root = tempDir('steps-root');
  try {
    const names = await insertNodes(mesh, N, { sites: 100, hubs: 2 });
    await perNodeFiles(mesh, root);
    await createQueues(mesh, names);
    const adm = mesh.store.admin;
    const asg = await connect('assignment', { env: mesh.env, max: 8 });
    // The new definitions as migrated, to put back after an old round.
    const NEW: Record<string, string> = {};
    for (const [k, sch] of [['take_owed', 'assignment'], ['on_declaration', 'audit']] as const) {
      const [r] = await adm.unsafe(`select pg_get_functiondef('${sch}.${k}'::regproc) as d`);
      NEW[k] = (r as unknown as { d: string }).d;
    }
    const use = async (which: 'old' | 'new') => { for (const k of Object.keys(OLD)) await adm.unsafe(which === 'old' ? OLD[k]! : NEW[k]!); };
    await asg`select overlay.allocate_addresses()`;
    const t0 = now();
    const composed = await asg`select node, resources::text as resources, resources_hash from assignment.compose_each(null)`;
    console.log(`[steps] composed ${composed.length} in ${((now() - t0) / 1000).toFixed(2)}s`);
    const conn = await admin(mesh);
    const chs = await Promise.all(Array.from({ length: PUBLISH_CHANNELS }, () => conn.createConfirmChannel()));
    const meter = () => cpuMeter({ postgres: () => serverPids().pg, rabbitmq: () => serverPids().rabbit, self: () => [process.pid] });
    const f = fresh();
    const sums: Record<string, number[]> = {};
    const note = (k: string, v: number) => { (sums[k] ??= []).push(v); };
    for (let r = 0; r < ROUNDS; r++) {
      const which = r % 2 === 0 ? 'old' : 'new';
      await use(which);
      // Record and commit, as declare's issue() does for one part.
      let tRec = 0, tCommit = 0;
      await asg.begin(async (tx) => {
        const serials = await tx`select node, serial from assignment.allocate_serials(${composed.map((c) => c.node as string)}::text[])`;
        const serialOf = new Map(serials.map((s) => [s.node as string, Number(s.serial)]));
        const made = composed.map((c) => {
          const node = c.node as string, serial = serialOf.get(node)!;
          return { node, serial, rhash: c.resources_hash as Buffer, env: envelope(bodyText(mesh.signer.mesh, node, serial, c.resources, f), mesh.signer) };
        });
        const a = now();
        await tx`select assignment.record_declarations(${made.map((m) => m.node)}::text[], ${made.map((m) => m.serial)}::bigint[],
                   ${made.map(() => '00'.repeat(32))}::text[], ${made.map((m) => m.rhash.toString('hex'))}::text[], ${made.map((m) => m.env.toString('utf8')).join('\n')}::text)`;
        tRec = (now() - a) / 1000;
        tCommit = now();
      });
      tCommit = (now() - tCommit) / 1000;
      note(`${which} record`, tRec); note(`${which} commit`, tCommit);
      if (r < 2) {
        const plan = await adm.unsafe(`explain (analyze, buffers) select * from assignment.take_owed(500, now())`);
        console.log(`[steps] ${which} take_owed(500) of ${N} owed: ${plan.map((p: any) => p['QUERY PLAN']).filter((l: string) => /Execution Time/.test(l)).join(' ')}`);
        await adm.unsafe(`load 'auto_explain'`).catch(() => {});
        const inner = which === 'old' ? `select o.id, o.node, o.kind, o.serial, d.envelope from assignment.outbox o join assignment.declaration d on d.node = o.node and d.serial = o.serial where o.delivered_at is null and o.next_attempt_at <= now() order by o.id limit 500 for update of o skip locked`
          : `with owed as (select o.id, o.node, o.kind, o.serial from assignment.outbox o where o.delivered_at is null and o.next_attempt_at <= now() order by o.id limit 500 for update skip locked) select w.id, w.node, w.kind, w.serial, d.envelope from owed w join assignment.declaration d on d.node = w.node and d.serial = w.serial order by w.id`;
        const p2 = await adm.begin((t) => t.unsafe(`explain (analyze, buffers) ${inner}`));
        console.log(p2.map((p: any) => '    ' + p['QUERY PLAN']).join('\n'));
      }
      const t1 = now();
      const m1 = meter();
      let total = 0;
      await Promise.all(Array.from({ length: DRAIN_LANES }, async () => {
        for (;;) { const x = await drainOnce(asg, chs, { batch: DRAIN_BATCH }); total += x.delivered; if (x.taken < DRAIN_BATCH) break; }
      }));
      const secs = (now() - t1) / 1000;
      const c1 = m1.stop();
      const pgms = (c1.cores.postgres! * c1.seconds * 1000) / total;
      note(`${which} drain /s`, total / secs); note(`${which} drain pg ms/row`, pgms);
      console.log(`[steps] round ${r} (${which}): record ${tRec.toFixed(2)}s, commit ${tCommit.toFixed(2)}s; drained ${total} in ${secs.toFixed(2)}s = ${(total / secs).toFixed(0)}/s; pg ${pgms.toFixed(3)} ms/row, rabbit ${c1.cores.rabbitmq}, self ${c1.cores.self} cores`);
      await purgeQueues(mesh, names);
    }
    await use('new');
    // The same bytes: md5 over every node's (node, composition, its sha256), as BENCHMARKS.md checks it; no composing function changed.
    const [m] = await asg`select md5(string_agg(node || ' ' || resources::text || ' ' || encode(resources_hash, 'hex'), E'\n' order by node)) as md5 from assignment.compose_each(null)`;
    const md5At = createHash('md5').update(composed.map((c) => `${c.node} ${c.resources} ${(c.resources_hash as Buffer).toString('hex')}`).join('\n')).digest('hex');
    console.log(`[steps] compositions md5 before the rounds ${md5At}, after ${m!.md5}`);
    for (const [k, v] of Object.entries(sums)) figs.push(figure({ id: `steps.${k}`, what: k, value: v.reduce((a, b) => a + b, 0) / v.length, unit: k.includes('/s') ? '/s' : k.includes('ms') ? 'ms' : 's' }));
    await conn.close();
    await asg.end();
  } finally {
    await mesh.stop().catch(() => {});
    removeDir(root);
  }
});
