// `mesh declare --all`'s steps apart, in process, at bench 3's fleet: where
// the command's time goes beyond composing. The steps declare() takes for
// each part (the turn held across them; compose, serials, sign, record,
// commit), one part after another, each step summed over the parts and timed
// with PostgreSQL's CPU beside it; then the record's two
// inserts under explain analyze (the outbox's foreign key shows as its
// trigger's calls and time) and the commit (the deferred audit trigger)
// apart. Seconds are read within one run only (the machine is shared).
import { freshMesh } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { envelope, declare, partsOf } from '../../src/assignment/declare.js';
import { bodyText, fresh } from '../../src/wire/declaration.js';
import { createHash } from 'node:crypto';
import { bench, now, envInt, tempDir, cpuMeter, serverPids, figure, tearDown, fanoutFleet } from './lib.js';

const N = envInt('MESH_BENCH_FANOUT_NODES', 10_000);
const ROUNDS = envInt('MESH_PROBE_ROUNDS', 3);

await bench('3d declare split', async (figs) => {
  const mesh = await freshMesh();
  const root = tempDir('split-root');
  try {
    await fanoutFleet(mesh, N, root);
    const adm = mesh.store.admin;
    const asg = await connect('assignment', { env: mesh.env, max: 3 });
    await asg`select overlay.allocate_addresses()`;
    const meter = () => cpuMeter({ postgres: () => serverPids().pg, self: () => [process.pid] });
    const sums: Record<string, number[]> = {};
    const note = (k: string, v: number) => {
      (sums[k] ??= []).push(v);
    };
    const f = fresh();
    for (let r = 0; r < ROUNDS; r++) {
      const t: Record<string, number> = {};
      let mark = now();
      const lap = (k: string) => {
        const x = now();
        t[k] = (t[k] ?? 0) + (x - mark) / 1000;
        mark = x;
      };
      const m = meter();
      // As declare() over connections of its own: the turn held for the session, then each part its own
      // transaction (here one part after another on one connection, so each step's time is its own).
      const conn = await asg.reserve();
      await conn`select assignment.hold_declare_turn()`;
      const targets = (await conn`select node from assignment.declarable(null::text[])`).map((x) => x.node as string);
      lap('turn+targets');
      for (const part of partsOf(targets)) {
        await conn.unsafe('begin');
        const composed =
          await conn`select c.node, c.resources, c.resources_hash from assignment.compose_each(${part}::text[]) c`;
        lap('compose (parts)');
        const serials =
          await conn`select node, serial from assignment.allocate_serials(${composed.map((c) => c.node as string)}::text[])`;
        lap('allocate_serials');
        const serialOf = new Map(serials.map((s) => [s.node as string, Number(s.serial)]));
        const made = composed.map((c) => {
          const node = c.node as string,
            serial = serialOf.get(node)!;
          const text = bodyText(mesh.signer.mesh, node, serial, c.resources, f);
          return {
            node,
            serial,
            digest: createHash('sha256').update(text).digest(),
            rhash: c.resources_hash as Buffer,
            env: envelope(text, mesh.signer),
          };
        });
        lap('body+sha+sign (node)');
        const lines = made.map((x) => x.env.toString('utf8')).join('\n');
        lap('join lines (node)');
        await conn`select assignment.record_declarations(${made.map((x) => x.node)}::text[], ${made.map((x) => x.serial)}::bigint[],
                   ${made.map((x) => x.digest.toString('hex'))}::text[], ${made.map((x) => x.rhash.toString('hex'))}::text[], ${lines}::text)`;
        lap('record_declarations');
        await conn.unsafe('commit');
        lap('commit');
      }
      await conn`select assignment.release_declare_turn()`;
      conn.release();
      const c = m.stop();
      const line = Object.entries(t)
        .map(([k, v]) => `${k} ${v.toFixed(3)}s`)
        .join(', ');
      console.log(
        `[split] round ${r}: ${line}; pg ${(c.cores.postgres! * c.seconds).toFixed(2)} cpu-s, self ${(c.cores.self! * c.seconds).toFixed(2)} cpu-s over ${c.seconds}s`,
      );
      for (const [k, v] of Object.entries(t)) note(k, v);
    }
    // compose_each's members apart: what each costs for the whole fleet, and how much text it makes.
    for (const [what, q] of [
      [
        'overlay.node_resources_of',
        `select count(*)::int as n, sum(length(x.resource::text))::bigint as bytes from overlay.node_resources_of(null) x`,
      ],
      [
        'assignment.firewalls',
        `select count(*)::int as n, sum(length(f.resource::text))::bigint as bytes from assignment.firewalls(null) f`,
      ],
      [
        'secret.node_resources',
        `select count(*)::int as n, sum(length(x.resource::text))::bigint as bytes from secret.node_resources x`,
      ],
      [
        'provision.node_resources',
        `select count(*)::int as n, sum(length(x.resource::text))::bigint as bytes from provision.node_resources x`,
      ],
      [
        'compose_each (one statement)',
        `select count(*)::int as n, sum(length(resources))::bigint as bytes from assignment.compose_each(null)`,
      ],
    ] as const) {
      const a = now();
      const [row] = (await adm.unsafe(q)) as any;
      console.log(
        `[split] ${what}: ${((now() - a) / 1000).toFixed(3)}s, ${row.n} rows, ${(Number(row.bytes) / 1e6).toFixed(1)} MB`,
      );
    }
    const hubs = (await adm.unsafe(
      `select node, length(resources) as len from assignment.compose_each(array['b000001','b000002','b000150']) order by 1`,
    )) as any;
    console.log(`[split] composition sizes: ${hubs.map((h: any) => `${h.node} ${h.len}`).join(', ')}`);
    if (process.env.MESH_PROBE_EXPLAIN_OVERLAY) {
      // The overlay's interfaces for every node, the function's body inline (a function's plan is not shown).
      const [{ def }] = (await adm.unsafe(`select pg_get_functiondef('overlay.peers_of'::regproc) as def`)) as any;
      const body = String(def)
        .split('$function$')[1]!
        .replace(/node_names/g, 'null::text[]');
      const plan = await adm.unsafe(`explain (analyze, timing) select count(*) from (${body}) p`);
      console.log(plan.map((x: any) => '    ' + x['QUERY PLAN']).join('\n'));
    }
    // The whole of declare() in process (its parts, its overlap), then the real CLI as bench 3 runs it.
    Object.assign(process.env, mesh.env);
    for (let r = 0; r < ROUNDS; r++) {
      const m = meter();
      const a = now();
      const out = await declare({ signer: mesh.signer });
      const secs = (now() - a) / 1000;
      const c = m.stop();
      console.log(
        `[split] declare() round ${r}: ${out.length} in ${secs.toFixed(3)}s; pg ${(c.cores.postgres! * c.seconds).toFixed(2)} cpu-s, self ${(c.cores.self! * c.seconds).toFixed(2)} cpu-s`,
      );
      note('declare() in process', secs);
      const b = now();
      const cli = await mesh.cli(['declare', '--all', '--json']);
      if (cli.code !== 0) throw new Error(`mesh declare --all: ${cli.stderr}`);
      note('mesh declare --all (CLI)', (now() - b) / 1000);
      console.log(`[split] mesh declare --all round ${r}: ${((now() - b) / 1000).toFixed(3)}s`);
    }
    // The record's inserts apart (rolled back): where in them the time goes.
    const [{ lines, nodes }] =
      (await asg`select string_agg(convert_from(envelope, 'utf8'), E'\n' order by node) as lines, array_agg(node order by node) as nodes
                                          from assignment.declaration where serial = 1`) as any;
    await adm
      .begin(async (tx) => {
        await tx`create temp table src on commit drop as select u.n, u.e from unnest(${nodes}::text[], string_to_array(${lines}::text, E'\n')) u(n, e)`;
        for (const q of [
          `explain (analyze, buffers) insert into assignment.declaration (node, serial, digest, resources_hash, envelope) select n, 1000, sha256(convert_to(e, 'utf8')), sha256(convert_to(e, 'utf8')), convert_to(e, 'utf8') from src`,
          `explain (analyze, buffers) insert into assignment.outbox (node, kind, serial) select n, 'declaration', 1000 from src`,
        ]) {
          const p = await tx.unsafe(q);
          console.log(p.map((x: any) => '    ' + x['QUERY PLAN']).join('\n'));
        }
        const a = now();
        await tx.unsafe('set constraints all immediate');
        console.log(`[split] the deferred triggers (audit) fired: ${((now() - a) / 1000).toFixed(3)}s`);
        throw new Error('rolled back, as meant');
      })
      .catch((err) => console.log(`[split] apart: ${(err as Error).message}`));
    for (const [k, v] of Object.entries(sums))
      figs.push(figure({ id: `split.${k}`, what: k, value: v.reduce((a, b) => a + b, 0) / v.length, unit: 's' }));
    await asg.end();
  } finally {
    await tearDown(mesh, undefined, root);
  }
});
