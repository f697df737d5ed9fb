// 7q. The questions only mesh answers, each at 10,000 nodes shaped like a
// fleet (bench 3's overlay: 100 sites, the first node of each dialable, 2
// hubs), made in SQL, each through the real CLI from spawn to exit and as its
// SQL alone, beside the raw query it is built on, in the same run:
// - `mesh overlay what-if --down HUB` (the hub of the larger group) and
//   `mesh overlay why A B --port P` across a provision-like module opening on
//   every node of one site: beside the peer graph the declarations carry
//   (overlay.peers) and the firewall's openings (assignment.firewall_openings);
// - the promise check (Q1) of one `mesh module add` with a promise of each
//   kind in place: the check's SQL (assignment.broken_promises) beside the
//   openings it reads, and the command beside the same change with no promise;
// - `mesh node show N --at T` and the fleet's `mesh diff --from FROM --to TO`
//   after every node was declared twice: beside the plain read of the kept
//   declarations they choose from (assignment.declaration);
// - `mesh advisories --advisory A` over every node's reported packages: beside
//   the plain read of the rows of the package the advisory names
//   (inventory.node_package).
import { freshMesh, MESH, runCli, type Mesh } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import {
  bench,
  figure,
  now,
  envInt,
  insertNodes,
  tempDir,
  appModule,
  nodeNameOf,
  type Figure,
  tearDown,
} from './lib.js';
import { b64 } from '../../src/crypto/keys.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const N = envInt('MESH_BENCH_QUESTIONS_NODES', 10_000);
const PORT = 5432;
// Packages each node reports beside the two of the advisory's source (a Debian machine runs hundreds; the
// answer reads the advisory's package through an index, so the others cost the setup, not the answer).
const PACKAGES = envInt('MESH_BENCH_QUESTIONS_PACKAGES', 40);

type Ok = (args: string[]) => Promise<{ stdout: string }>;

/** Push each figure and print it at once: a long run's first answers are read before it ends. */
function shown(figs: Figure[], ...add: Figure[]): void {
  for (const f of add) {
    figs.push(f);
    console.log(
      `[questions] ${f.id}: ${f.value.toFixed(3)} ${f.unit} beside ${f.limit?.value.toFixed(3)} ${f.unit} (${f.limit?.what})`,
    );
  }
}

const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
  const t0 = now();
  const v = await f();
  return [v, (now() - t0) / 1000];
};

await bench('7q questions', async (figs) => {
  const mesh = await freshMesh();
  const dir = tempDir('questions');
  try {
    await insertNodes(mesh, N, { sites: 100, hubs: 2 });
    await mesh.store.admin`update inventory.node set last_seen = now()`;
    await mesh.store.admin`select overlay.allocate_addresses()`;
    const ok = async (args: string[]) => {
      const r = await runCli(MESH, args, mesh.env);
      if (r.code !== 0) throw new Error(`mesh ${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    // A service on every node of site s2 that admits the nodes of site s3: openings with sources to resolve.
    const f = join(dir, 'db.json');
    writeFileSync(
      f,
      JSON.stringify({
        name: 'db',
        resources: [{ kind: 'opening', name: 'pg', proto: 'tcp', port: PORT, from: 'site:s3' }],
      }),
    );
    await ok(['module', 'add', f]);
    await mesh.store
      .admin`insert into assignment.assignment (module, node) select 'db', name from inventory.node where site = 's2'`;
    // Nothing owed: why then reads the graph and the firewall through to "path open", its longest answer.
    await mesh.store.admin`update assignment.outbox set delivered_at = now() where delivered_at is null`;
    // The first hub by name: its group holds /20 blocks 0 and 2 of the three 10,000 addresses span (O4).
    const hub = nodeNameOf(1);
    const [from, to] = [nodeNameOf(104), nodeNameOf(103)]; // sites s3 and s2, both behind NAT, both in hub's group

    // The answers whose SQL is quick first, each figure printed as it is measured; what-if and why last.
    await history(mesh, ok, dir, figs);
    await promises(mesh, ok, dir, figs, [from, to]);
    await advisories(mesh, ok, dir, figs);
    await mesh.store.admin`update assignment.outbox set delivered_at = now() where delivered_at is null`;

    const asg = await connect('assignment', { env: mesh.env, max: 1 });
    const [edges, rawGraph] = await timed(() => asg`select count(*)::int as n from overlay.peers()`);
    const [, rawOpenings] = await timed(() => asg`select count(*)::int as n from assignment.firewall_openings(false)`);
    const parts: Record<string, number> = {};
    const part = async <T>(name: string, f: () => Promise<T>) => {
      const [v, s] = await timed(f);
      parts[name] = s;
      return v;
    };
    const [stranded, whatIfSql] = await timed(async () => {
      const s = await part(
        'strand_spokes',
        () => asg`select count(*)::int as n, sum(lost)::bigint as lost from overlay.strand_spokes(${[hub]}::text[])`,
      );
      await part('lose_paths', () => asg`select * from overlay.lose_paths(${[hub]}::text[], 100)`);
      await part('lose_openings', () => asg`select * from assignment.lose_openings(${[hub]}::text[])`);
      return s[0]!;
    });
    // Every node here, as of now: a slow run must not leave an end out of touch before why is asked.
    await mesh.store.admin`update inventory.node set last_seen = now()`;
    const [answer, whySql] = await timed(
      async () => (await asg`select fact from assignment.explain_path(${from}, ${to}, ${PORT})`)[0]!.fact as string,
    );
    await asg.end();
    if (answer !== 'path open') throw new Error(`why ${from} ${to} --port ${PORT} says ${answer}, not path open`);

    const [w, whatIfCli] = await timed(() => ok(['overlay', 'what-if', '--down', hub, '--json']));
    const said = JSON.parse(w.stdout) as { stranded: unknown[]; pairsTotal: number };
    if (said.stranded.length !== stranded.n) throw new Error('the CLI and the SQL strand different spokes');
    await mesh.store.admin`update inventory.node set last_seen = now()`;
    const [, whyCli] = await timed(() => ok(['overlay', 'why', from, to, '--port', String(PORT), '--json']));
    console.log(`[questions] what-if's SQL in parts: ${JSON.stringify(parts)}`);
    console.log(
      `[questions] ${N} nodes, ${edges[0]!.n} peer rows; --down ${hub} strands ${stranded.n} spokes, ${said.pairsTotal} pairs lose their path`,
    );

    const graph = { what: 'raw select of the peer graph (overlay.peers)', value: rawGraph, unit: 's' };
    const fw = { what: 'raw select of every opening (assignment.firewall_openings)', value: rawOpenings, unit: 's' };
    shown(
      figs,
      figure({
        id: 'questions.what-if.sql',
        what: `what-if --down ${hub} in SQL (strand_spokes, the first 100 lost pairs, lose_openings), ${N} nodes`,
        value: whatIfSql,
        unit: 's',
        limit: graph,
        bound:
          "each member's group now and without the hub, then counts per site; the openings of the nodes that lose a path resolve their sources",
        detail: parts,
      }),
      figure({
        id: 'questions.what-if.cli',
        what: `mesh overlay what-if --down ${hub} --json, spawn to exit, ${N} nodes`,
        value: whatIfCli,
        unit: 's',
        limit: graph,
        bound: 'the SQL above, every stranded spoke printed, and the CLI start',
      }),
      figure({
        id: 'questions.why.sql',
        what: `why ${from} ${to} --port ${PORT} in SQL (assignment.explain_path), ${N} nodes`,
        value: whySql,
        unit: 's',
        limit: fw,
        bound: 'the two ends of the graph, and every opening of the fleet read to find the one on the port',
      }),
      figure({
        id: 'questions.why.cli',
        what: `mesh overlay why ${from} ${to} --port ${PORT} --json, spawn to exit, ${N} nodes`,
        value: whyCli,
        unit: 's',
        limit: fw,
        bound: 'the SQL above and the CLI start',
      }),
    );
  } finally {
    await tearDown(mesh, undefined, dir);
  }
});

/** Every node declared twice (a module on all, changed once): what `node show --at` and `diff` choose from. */
async function history(mesh: Mesh, ok: Ok, dir: string, figs: Figure[]): Promise<void> {
  const app = (v: string) => appModule(dir, v);
  await ok(['module', 'add', app('v1')]);
  await mesh.store.admin`insert into assignment.assignment (module, node) select 'app', name from inventory.node`;
  await ok(['declare', '--all']);
  await mesh.store.admin`update assignment.declaration set acknowledged_at = now() where acknowledged_at is null`;
  const [{ t1 }] = (await mesh.store.admin`select clock_timestamp() as t1`) as unknown as { t1: Date }[];
  await ok(['module', 'add', app('v2')]); // W2 declares every node again
  const [{ t2 }] = (await mesh.store.admin`select clock_timestamp() as t2`) as unknown as { t2: Date }[];
  await mesh.store.admin`update assignment.outbox set delivered_at = now() where delivered_at is null`;
  await mesh.store.admin`analyze assignment.declaration`;
  const node = nodeNameOf(104);

  const asg = await connect('assignment', { env: mesh.env, max: 1 });
  const [kept, rawAll] = await timed(
    () => asg`select node, serial, issued_at, acknowledged_at, envelope from assignment.declaration`,
  );
  const [, rawOne] = await timed(
    () => asg`select serial, issued_at, acknowledged_at, envelope from assignment.declaration where node = ${node}`,
  );
  const [at, atSql] = await timed(
    () => asg`select * from assignment.declared_at(array[${node}]::text[], ${t1}::timestamptz)`,
  );
  const [changes, diffSql] = await timed(
    () => asg`select * from assignment.declared_changes(null, ${t1}::timestamptz, ${t2}::timestamptz)`,
  );
  await asg.end();
  if (kept.length < 2 * N) throw new Error(`${kept.length} declarations kept, not two a node`);
  if (!at[0]?.serial || !at[0]?.applied_serial)
    throw new Error(`${node} had no declaration applied at ${t1.toISOString()}`);
  if (new Set(changes.map((c) => c.node)).size !== N) throw new Error('diff did not change every node');

  const [nodeShow, atCli] = await timed(() => ok(['node', 'show', node, '--at', t1.toISOString(), '--json']));
  if ((JSON.parse(nodeShow.stdout) as { declared: { serial: number } }).declared.serial !== Number(at[0].serial))
    throw new Error('node show --at and its SQL name different declarations');
  const [d, diffCli] = await timed(() => ok(['diff', '--from', t1.toISOString(), '--to', t2.toISOString(), '--json']));
  const groups = (JSON.parse(d.stdout) as { groups: { nodes: number }[] }).groups;
  if (groups.reduce((a, g) => a + g.nodes, 0) !== N) throw new Error('mesh diff did not say every node changed');
  console.log(`[questions] ${kept.length} declarations kept; diff: ${changes.length} changes on ${N} nodes`);

  const one = { what: `plain read of ${node}'s kept declarations (assignment.declaration)`, value: rawOne, unit: 's' };
  const all = { what: `plain read of every kept declaration, ${kept.length} rows`, value: rawAll, unit: 's' };
  shown(
    figs,
    figure({
      id: 'questions.at.sql',
      what: `node show ${node} --at T in SQL (assignment.declared_at), ${N} nodes each declared twice`,
      value: atSql,
      unit: 's',
      limit: one,
      bound: "the node's serials by index, then the two envelopes chosen read and their resources parsed",
    }),
    figure({
      id: 'questions.at.cli',
      what: `mesh node show ${node} --at T --json, spawn to exit`,
      value: atCli,
      unit: 's',
      limit: one,
      bound: 'the CLI start and connect: the SQL above is a few milliseconds',
    }),
    figure({
      id: 'questions.diff.sql',
      what: `fleet diff --from FROM --to TO in SQL (assignment.declared_changes), ${N} nodes each changed`,
      value: diffSql,
      unit: 's',
      limit: all,
      bound: "each node's declaration at both times chosen, both envelopes parsed, resources compared one by one",
    }),
    figure({
      id: 'questions.diff.cli',
      what: `mesh diff --from FROM --to TO --json, spawn to exit, ${N} nodes each changed`,
      value: diffCli,
      unit: 's',
      limit: all,
      bound: 'the SQL above twice (the grouped lines, then every node for --json), and the CLI start',
    }),
  );
}

/** One `mesh module add` (the db module, on one site's nodes) without a promise, then with one of each kind. */
async function promises(mesh: Mesh, ok: Ok, dir: string, figs: Figure[], [from, to]: string[]): Promise<void> {
  const db = (v: string) => {
    const f = join(dir, 'db.json');
    writeFileSync(
      f,
      JSON.stringify({
        name: 'db',
        resources: [
          { kind: 'opening', name: 'pg', proto: 'tcp', port: PORT, from: 'site:s3' },
          { kind: 'file', path: '/etc/db.conf', content: b64(Buffer.from(v)), mode: '0644' },
        ],
      }),
    );
    return f;
  };
  const [, plainAdd] = await timed(() => ok(['module', 'add', db('v2')]));
  await ok(['promise', 'add', 'no-s5-postgres', '--site', 's5', '--closed', String(PORT)]);
  await ok(['promise', 'add', 'from-reaches-db', '--node', from!, '--reaches', `${to}:${PORT}`]);
  await ok(['promise', 'add', 'app-runs', '--module', 'app', '--runs', 'app']);
  await ok(['promise', 'add', 'two-hubs', '--hubs', '2']);

  const asg = await connect('assignment', { env: mesh.env, max: 1 });
  const [, rawOpenings] = await timed(() => asg`select count(*)::int as n from assignment.firewall_openings(false)`);
  const [broken, checkSql] = await timed(() => asg`select * from assignment.broken_promises()`);
  await asg.end();
  if (broken.length) throw new Error(`promises broken before the change: ${JSON.stringify(broken)}`);
  const [, checkedAdd] = await timed(() => ok(['module', 'add', db('v3')]));

  shown(
    figs,
    figure({
      id: 'questions.promise.sql',
      what: `the promise check in SQL (assignment.broken_promises), 4 promises (closed, reaches, runs on ${N} nodes, hubs)`,
      value: checkSql,
      unit: 's',
      limit: { what: 'raw select of every opening (assignment.firewall_openings)', value: rawOpenings, unit: 's' },
      bound:
        "every opening read once for closed and reaches, the reaching node's peers, each assignment of the runs module",
    }),
    figure({
      id: 'questions.promise.cli',
      what: `mesh module add db (on site s2's nodes) with the 4 promises in place, spawn to exit`,
      value: checkedAdd,
      unit: 's',
      limit: { what: 'the same module add with no promise', value: plainAdd, unit: 's' },
      bound:
        'the change itself (compose and declare the module nodes), and the check twice: before the first row and at commit',
      detail: { rawOpenings, checkSql },
    }),
  );
}

/** Every node reports PACKAGES packages and two of openssl, a third each below, at and above the fix. */
async function advisories(mesh: Mesh, ok: Ok, dir: string, figs: Figure[]): Promise<void> {
  const ID = 'DSA-5532-1';
  await mesh.store.admin`
    insert into inventory.node_package (node, name, arch, version, source)
    select n.name, p.name, 'amd64', p.version, p.source
      from inventory.node n,
           lateral (select case substr(n.name, 2)::int % 3 when 0 then '3.0.11-1~deb12u1'
                                                          when 1 then '3.0.11-1~deb12u2'
                                                          else '3.0.13-1~deb12u1' end as ssl,
                           substr(n.name, 2)::int % 3 as k) x,
           lateral (select 'openssl', x.ssl, 'openssl'
                    union all select 'libssl3', x.ssl, 'openssl'
                    union all select 'pkg' || j, '1.' || j || '-' || (1 + x.k), 'src' || (j / 4)
                                from generate_series(1, ${PACKAGES}::int) j) p(name, version, source)`;
  await mesh.store.admin`analyze inventory.node_package`;
  const f = join(dir, 'advisory.json');
  writeFileSync(
    f,
    JSON.stringify({
      id: ID,
      summary: 'openssl security update',
      affected: [
        {
          package: { ecosystem: 'Debian:12', name: 'openssl' },
          ranges: [{ type: 'ECOSYSTEM', events: [{ introduced: '0' }, { fixed: '3.0.11-1~deb12u2' }] }],
        },
      ],
    }),
  );
  await ok(['advisories', 'load', f]);

  const inv = await connect('inventory', { env: mesh.env, max: 1 });
  const [rows, raw] = await timed(
    () =>
      inv`select node, name, arch, version from inventory.node_package where source = 'openssl' or name = 'openssl'`,
  );
  const [hits, sql] = await timed(
    () => inv`select advisory, node, name, arch, version, fixed from inventory.advisory_node
               where advisory = ${ID} order by advisory, node, name, arch`,
  );
  await inv.end();
  const below = 2 * Math.floor(N / 3);
  if (hits.length !== below) throw new Error(`advisory_node lists ${hits.length} packages, not ${below}`);
  const [r, cli] = await timed(() => ok(['advisories', '--advisory', ID, '--json']));
  if ((JSON.parse(r.stdout) as unknown[]).length !== below) throw new Error('mesh advisories and its SQL differ');
  console.log(`[questions] ${N * (PACKAGES + 2)} packages reported; ${ID} lists ${hits.length} on ${below / 2} nodes`);

  const plain = {
    what: `plain read of the ${rows.length} openssl package rows (inventory.node_package)`,
    value: raw,
    unit: 's',
  };
  shown(
    figs,
    figure({
      id: 'questions.advisories.sql',
      what: `advisories --advisory ${ID} in SQL (inventory.advisory_node), ${N} nodes, ${PACKAGES + 2} packages each`,
      value: sql,
      unit: 's',
      limit: plain,
      bound: "the advisory's ranges, then an index range on (source, version_key) and on (name, version_key) each",
    }),
    figure({
      id: 'questions.advisories.cli',
      what: `mesh advisories --advisory ${ID} --json, spawn to exit`,
      value: cli,
      unit: 's',
      limit: plain,
      bound: 'the SQL above, every affected row printed, and the CLI start',
    }),
  );
}
