// Why `mesh declare --all` at bench 3's fleet varies on an idle machine
// (issue 17): compose_each(null) on tables a bulk load left without
// statistics against the same after `analyze`, in turns (the statistics wiped
// again between: pg_statistic rows gone, reltuples -1, as after the load),
// each with PostgreSQL's CPU beside its seconds and md5 of every node's
// composition (the bytes must not depend on the plan); then the first declare
// of a fleet against the ones after it, step by step. With MESH_PROBE_EXPLAIN
// the plan of every statement slower than 50 ms inside each (auto_explain,
// nested). Autovacuum is off for the probe so each state lasts while it is
// measured.
import postgres from 'postgres';
import { createHash } from 'node:crypto';
import { freshMesh } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { envelope } from '../../src/assignment/declare.js';
import { composeInParts, partsFor } from '../../src/assignment/compose_parts.js';
import { bodyText, fresh } from '../../src/wire/declaration.js';
import { bench, now, envInt, tempDir, removeDir, insertNodes, perNodeFiles, figure, cpuMeter, serverPids } from './lib.js';

const N = envInt('MESH_BENCH_FANOUT_NODES', 10_000);
const ROUNDS = envInt('MESH_PROBE_ROUNDS', 3);
const EXPLAIN = !!process.env.MESH_PROBE_EXPLAIN;
const PARTS = (process.env.MESH_PROBE_PARTS ?? 'stats,variants,declare').split(',');
// Definitions before this branch, put back by the admin for the "old" turns (the new as migrated).
const OLD: Record<string, string> = {
  'assignment.compose_each': `create or replace function assignment.compose_each(node_names text[])
returns table (node text, resources text, resources_hash bytea, changed boolean)
language sql stable set jit = off set work_mem = '64MB' rows 1000 as $$
  with want as materialized (
    select e.name as node, e.enrolled_at from inventory.enrolled_node e
     where node_names is null or e.name in (select unnest(node_names))),
  -- One list for every node, or no row at all while inventory.broker is empty (0020).
  brokers as materialized (
    select jsonb_build_object('id', 'brokers', 'kind', 'brokers', 'brokers',
             jsonb_agg(jsonb_build_object('address', k.address, 'fingerprint', k.fingerprint) order by k.address)) as resource
      from inventory.broker_nodes k having count(*) > 0),
  r as (
    select a.node, e.value as resource
      from assignment.assignment a
      join want w on w.node = a.node
      join catalogue.module_resources m on m.name = a.module
      cross join lateral jsonb_array_elements(m.resources) e
     where e.value->>'kind' is distinct from 'opening'
    union all select x.node, x.resource from overlay.node_resources_of((select array_agg(node) from want)) x
    union all select x.node, x.resource from secret.node_resources x join want w on w.node = x.node
    union all select x.node, x.resource from provision.node_resources x join want w on w.node = x.node
    union all select f.node, f.resource from assignment.firewalls((select array_agg(node) from want)) f
    union all select w.node, b.resource from want w cross join brokers b),
  c as (
    select w.node, w.enrolled_at, coalesce('[' || string_agg(r.resource::text, ', ' order by r.resource->>'id') || ']', '[]') as resources
      from want w left join r on r.node = w.node
     group by w.node, w.enrolled_at)
  select c.node, c.resources, h.hash,
         h.hash is distinct from coalesce(
           (select d.resources_hash from assignment.declaration d
             where d.node = c.node and d.issued_at >= c.enrolled_at
             order by d.serial desc limit 1),
           sha256(convert_to('[]'::jsonb::text, 'utf8')))
    from c cross join lateral (select sha256(convert_to(c.resources, 'utf8')) as hash) h
   order by c.node
$$`,
  'overlay.interfaces_of': `create or replace function overlay.interfaces_of(node_names text[]) returns table (node text, resource jsonb)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  with s as (select network, listen_port, interface from overlay.settings),
       p as (select * from overlay.peers_of(node_names))
  select m.name,
         jsonb_strip_nulls(jsonb_build_object(
           'id', 'wireguard:' || s.interface,
           'kind', 'wireguard',
           'name', s.interface,
           'address', host(m.address) || '/' || masklen(s.network),
           'listenPort', case when m.dialable is not null then s.listen_port end,
           'hub', m.hub,
           'peers', jsonb_agg(jsonb_build_object('publicKey', p.public_key, 'endpoint', p.endpoint,
                                                 'allowedIps', to_jsonb(p.allowed_ips), 'keepalive', p.keepalive)
                              order by p.public_key)))
    from overlay.member m
    cross join s
    join p on p.node = m.name
   group by m.name, m.address, m.dialable, m.hub, s.network, s.listen_port, s.interface
$$`,
};
const SCHEMAS = `('inventory','overlay','assignment','secret','provision','catalogue','audit')`;

await bench('3c compose and statistics', async (figs) => {
  const mesh = await freshMesh();
  const root = tempDir('stats-root');
  const adm = mesh.store.admin;
  const plans: string[] = [];
  try {
    await adm.unsafe('alter system set autovacuum = off');
    await adm.unsafe('select pg_reload_conf()');
    const [{ db }] = await adm`select current_database() as db` as any;
    if (EXPLAIN) {
      for (const s of [`session_preload_libraries = 'auto_explain'`, `auto_explain.log_min_duration = 50`, `auto_explain.log_analyze = on`,
        `auto_explain.log_timing = off`, `auto_explain.log_nested_statements = on`, `auto_explain.log_level = notice`]) await adm.unsafe(`alter database "${db}" set ${s}`);
    }
    await insertNodes(mesh, N, { sites: 100, hubs: 2 });
    await perNodeFiles(mesh, root);
    const url = mesh.env.MESH_STORE_ASSIGNMENT!;
    const asg = postgres(url, { max: 3, onnotice: (n) => { plans.push(n.message); }, types: { bigint: postgres.BigInt } }) as any;
    await asg`select overlay.allocate_addresses()`;
    const pg = () => cpuMeter({ postgres: () => serverPids().pg });
    const wipe = async () => {
      // As a bulk load leaves them: no column statistics, reltuples unknown (-1), the page count as it is.
      await adm.unsafe(`delete from pg_statistic where starelid in (select c.oid from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname in ${SCHEMAS})`);
      await adm.unsafe(`update pg_class c set reltuples = -1 from pg_namespace n where n.oid = c.relnamespace and n.nspname in ${SCHEMAS} and c.relkind in ('r','i','t')`);
    };
    const compose = async (what: string) => {
      plans.length = 0;
      const m = pg();
      const a = now();
      const [r] = await asg`select count(*)::int as n, md5(string_agg(node || ' ' || resources, E'\n' order by node)) as md5 from assignment.compose_each(null)`;
      const s = (now() - a) / 1000;
      const c = m.stop();
      const cpu = c.cores.postgres! * c.seconds;
      console.log(`[stats] ${what}: ${s.toFixed(3)}s, pg ${cpu.toFixed(2)} cpu-s, ${r!.n} nodes, md5 ${r!.md5}`);
      if (plans.length) console.log(`[stats] plans, ${what}:\n${plans.join('\n')}`);
      figs.push(figure({ id: `stats.${what}`, what, value: s, unit: 's', detail: { md5: r!.md5, pgCpu: cpu } }));
    };
    for (let r = 0; PARTS.includes('stats') && r < ROUNDS; r++) {
      await wipe();
      await compose(`compose without statistics ${r}`);
      await adm.unsafe('analyze');
      await compose(`compose after analyze ${r}`);
    }
    // The old definitions and the new in turns, statistics as analyze leaves them: the same md5, less CPU.
    const NEW: Record<string, string> = {};
    for (const k of Object.keys(OLD)) NEW[k] = String((await adm.unsafe(`select pg_get_functiondef('${k}'::regproc) as d`) as any)[0].d);
    const use = async (which: Record<string, string>) => { for (const d of Object.values(which)) await adm.unsafe(d); };
    if (PARTS.includes('variants')) {
      await adm.unsafe('analyze');
      for (let r = 0; r < ROUNDS; r++) {
        await use(OLD);
        await compose(`compose, old definitions ${r}`);
        await use(NEW);
        await compose(`compose, new definitions ${r}`);
      }
    }
    // compose_each's members apart, each by PostgreSQL's CPU (seconds move with the neighbours).
    for (let r = 0; PARTS.includes('members') && r < ROUNDS; r++) {
      for (const [what, q] of [
        ['peers_of', `select count(*) from overlay.peers_of(null)`],
        ['interfaces_of', `select count(*) from overlay.interfaces_of(null)`],
        ['peers jsonb_agg', `select count(*) from (select p.node, jsonb_agg(jsonb_build_object('publicKey', p.public_key, 'endpoint', p.endpoint, 'allowedIps', to_jsonb(p.allowed_ips), 'keepalive', p.keepalive) order by p.public_key) from overlay.peers_of(null) p group by p.node) x`],
        ['peers jsonb_agg as text', `select sum(length(j::text)) from (select p.node, jsonb_agg(jsonb_build_object('publicKey', p.public_key, 'endpoint', p.endpoint, 'allowedIps', to_jsonb(p.allowed_ips), 'keepalive', p.keepalive) order by p.public_key) j from overlay.peers_of(null) p group by p.node) x`],
        ['peers string_agg text', `select sum(length(j)) from (select p.node, string_agg('{"endpoint": ' || coalesce(to_json(p.endpoint)::text, 'null') || ', "publicKey": ' || to_json(p.public_key)::text || ', "allowedIps": ' || to_json(p.allowed_ips)::text || '}', ', ' order by p.public_key) j from overlay.peers_of(null) p group by p.node) x`],
        ['peers jsonb to text each', `select sum(length(jsonb_build_object('publicKey', p.public_key, 'endpoint', p.endpoint, 'allowedIps', to_jsonb(p.allowed_ips), 'keepalive', p.keepalive)::text)) from overlay.peers_of(null) p`],
        ['interfaces_of as text', `select sum(length(resource::text)) from overlay.interfaces_of(null)`],
        ['interface_texts_of', `select sum(length(resource)) from overlay.interface_texts_of(null)`],
        ['firewall_openings', `select count(*) from assignment.firewall_openings(false)`],
        ['firewalls as text', `select sum(length(resource::text)) from assignment.firewalls(null)`],
        ['provision.node_resources as text', `select sum(length(resource::text)) from provision.node_resources`],
        ['compose_each', `select sum(length(resources)) from assignment.compose_each(null)`],
      ] as const) {
        const m = pg();
        await asg.unsafe(q);
        const c = m.stop();
        console.log(`[stats] member ${what} ${r}: ${c.seconds}s, pg ${(c.cores.postgres! * c.seconds).toFixed(2)} cpu-s`);
      }
    }
    // declare() as it runs, each step timed: the first of a fleet (empty declaration, outbox and history,
    // never analysed, as in bench 3) and the ones after it (statistics as the first left them).
    await wipe();
    for (let r = 0; PARTS.includes('declare') && r < ROUNDS; r++) {
      const t: Record<string, number> = {};
      let mark = now();
      const lap = (k: string) => { const x = now(); t[k] = (now() - mark) / 1000; mark = x; };
      plans.length = 0;
      const m = pg();
      const f = fresh();
      await asg.begin(async (tx: any) => {
        await tx`select assignment.take_declare_turn()`;
        const targets = (await tx`select node from assignment.declarable(null::text[])`).map((x: any) => x.node as string);
        lap('targets');
        const all: any[] = [];
        const q = (c: any, nodes: string[]) => c`select c.node, c.resources, c.resources_hash from assignment.compose_each(${nodes}::text[]) c`;
        await composeInParts(tx, asg, targets, partsFor(targets.length), q, async (rows) => { all.push(...rows); return rows; });
        lap('compose');
        const serials = await tx`select node, serial from assignment.allocate_serials(${all.map((c) => c.node as string)}::text[])`;
        const serialOf = new Map<string, number>(serials.map((s: any) => [s.node as string, Number(s.serial)]));
        const made = all.map((c) => {
          const node = c.node as string, serial = serialOf.get(node)!;
          const text = bodyText(mesh.signer.mesh, node, serial, c.resources, f);
          return { node, serial, digest: createHash('sha256').update(text).digest(), rhash: c.resources_hash as Buffer, env: envelope(text, mesh.signer) };
        });
        lap('serials+sign');
        for (let i = 0; i < made.length; i += 1000) {
          const ch = made.slice(i, i + 1000);
          await tx`select assignment.record_declarations(${ch.map((x) => x.node)}::text[], ${ch.map((x) => x.serial)}::bigint[],
                     ${ch.map((x) => x.digest.toString('hex'))}::text[], ${ch.map((x) => x.rhash.toString('hex'))}::text[], ${ch.map((x) => x.env.toString('utf8')).join('\n')}::text)`;
        }
        lap('record');
      });
      lap('commit');
      const c = m.stop();
      const line = Object.entries(t).map(([k, v]) => `${k} ${v.toFixed(3)}s`).join(', ');
      console.log(`[stats] declare ${r}: ${line}; pg ${(c.cores.postgres! * c.seconds).toFixed(2)} cpu-s over ${c.seconds}s`);
      if (plans.length) console.log(`[stats] plans, declare ${r}:\n${plans.join('\n')}`);
      for (const [k, v] of Object.entries(t)) figs.push(figure({ id: `stats.declare${r}.${k}`, what: `declare ${r}: ${k}`, value: v, unit: 's' }));
    }
    await asg.end();
  } finally {
    await adm.unsafe('alter system reset autovacuum').catch(() => {});
    await adm.unsafe('select pg_reload_conf()').catch(() => {});
    await mesh.stop().catch(() => {});
    removeDir(root);
  }
});
