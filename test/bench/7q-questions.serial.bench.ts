// 7q. The questions the overlay answers (Q2) at 10,000 nodes shaped like a
// fleet (bench 3's overlay: 100 sites, the first node of each dialable, 2
// hubs), a provision-like module opening on every node of one site: `mesh
// overlay what-if --down HUB` (the hub most spokes route through) and `mesh
// overlay why A B --port P`, each through the real CLI from spawn to exit and
// as its SQL alone, beside the raw query it is built on, in the same run:
// the peer graph the declarations carry (overlay.peers) for what-if, the
// firewall's openings (assignment.firewall_openings) for why.
import { freshMesh, MESH, runCli } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { bench, figure, now, envInt, insertNodes, tempDir, removeDir, nodeNameOf } from './lib.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const N = envInt('MESH_BENCH_QUESTIONS_NODES', 10_000);
const PORT = 5432;

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
    const hub = nodeNameOf(1); // site s0's hub, and by name the route hub of every site without one of its own
    const [from, to] = [nodeNameOf(104), nodeNameOf(103)]; // sites s3 and s2, both behind NAT, both routing through hub

    const asg = await connect('assignment', { env: mesh.env, max: 1 });
    const timed = async <T>(f: () => Promise<T>): Promise<[T, number]> => {
      const t0 = now();
      const v = await f();
      return [v, (now() - t0) / 1000];
    };
    const [edges, rawGraph] = await timed(() => asg`select count(*)::int as n from overlay.peers()`);
    const [, rawOpenings] = await timed(() => asg`select count(*)::int as n from assignment.firewall_openings(false)`);
    const [stranded, whatIfSql] = await timed(async () => {
      const s =
        await asg`select count(*)::int as n, sum(lost)::bigint as lost from overlay.strand_spokes(${[hub]}::text[])`;
      await asg`select * from overlay.lose_paths(${[hub]}::text[], 100)`;
      await asg`select * from assignment.lose_openings(${[hub]}::text[])`;
      return s[0]!;
    });
    const [answer, whySql] = await timed(
      async () => (await asg`select fact from assignment.explain_path(${from}, ${to}, ${PORT})`)[0]!.fact as string,
    );
    await asg.end();
    if (answer !== 'path open') throw new Error(`why ${from} ${to} --port ${PORT} says ${answer}, not path open`);

    const [w, whatIfCli] = await timed(() => ok(['overlay', 'what-if', '--down', hub, '--json']));
    const said = JSON.parse(w.stdout) as { stranded: unknown[]; pairsTotal: number };
    if (said.stranded.length !== stranded.n) throw new Error('the CLI and the SQL strand different spokes');
    const [, whyCli] = await timed(() => ok(['overlay', 'why', from, to, '--port', String(PORT), '--json']));
    console.log(
      `[questions] ${N} nodes, ${edges[0]!.n} peer rows; --down ${hub} strands ${stranded.n} spokes, ${said.pairsTotal} pairs lose their path`,
    );

    const graph = { what: 'raw select of the peer graph (overlay.peers)', value: rawGraph, unit: 's' };
    const fw = { what: 'raw select of every opening (assignment.firewall_openings)', value: rawOpenings, unit: 's' };
    figs.push(
      figure({
        id: 'questions.what-if.sql',
        what: `what-if --down ${hub} in SQL (strand_spokes, the first 100 lost pairs, lose_openings), ${N} nodes`,
        value: whatIfSql,
        unit: 's',
        limit: graph,
        bound:
          'each member and its route hub now and without the hub, then counts per site; the openings resolve their sources',
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
    await mesh.stop().catch((e) => console.error(`[bench] cleanup: ${(e as Error).message}`));
    removeDir(dir);
  }
});
