// 7. `mesh plan --all` for 100,000 nodes made in SQL (MESH_BENCH_PLAN_NODES),
// shaped like a fleet (bench 3's overlay: 100 sites, 2 hubs), every node having applied its
// declaration, then one module file changed on all of them: the real CLI,
// until it printed its grouped lines. Beside it, in the same run, the raw
// select of the same compositions (assignment.compose_each) that plan
// compares with what each node acknowledged.
import { freshMesh, MESH, runCli } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { bench, figure, now, envInt, insertNodes, tempDir, appModule, tearDown } from './lib.js';

const N = envInt('MESH_BENCH_PLAN_NODES', 100_000);

await bench('7 plan --all', async (figs) => {
  const mesh = await freshMesh();
  const dir = tempDir('plan');
  try {
    await insertNodes(mesh, N, { sites: 100, hubs: 2 });
    const mod = (v: string) => appModule(dir, v);
    const ok = async (args: string[]) => {
      const r = await runCli(MESH, args, mesh.env);
      if (r.code !== 0) throw new Error(`mesh ${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    await ok(['module', 'add', mod('v1')]);
    await mesh.store.admin`insert into assignment.assignment (module, node) select 'app', name from inventory.node`;
    await ok(['declare', '--all']);
    await mesh.store.admin`update assignment.declaration set acknowledged_at = now()`;
    await ok(['module', 'add', mod('v2')]); // W2 declares every node again: none has acknowledged it

    const asg = await connect('assignment', { env: mesh.env, max: 1 });
    const r0 = now();
    const rows = await asg`select node, resources from assignment.compose_each(null)`;
    const rawSeconds = (now() - r0) / 1000;
    await asg.end();
    if (rows.length !== N) throw new Error(`composed ${rows.length} nodes, not ${N}`);

    const p0 = now();
    const r = await ok(['plan', '--all']);
    const planSeconds = (now() - p0) / 1000;
    const lines = r.stdout.trim().split('\n');
    console.log(`[plan] mesh plan --all printed ${lines.length} line(s):\n${lines.slice(0, 5).join('\n')}`);
    // Every node changed the same file, so one line; the hubs and dialable nodes carry the same change.
    if (
      !lines.some((l) =>
        l.startsWith(`${N.toLocaleString('en')} nodes: file:/etc/app.conf changed, service:app restarts`),
      )
    )
      throw new Error(`plan --all did not say the change: ${r.stdout.slice(0, 500)}`);
    figs.push(
      figure({
        id: 'plan.all',
        what: `mesh plan --all, ${N} nodes, one file changed on all`,
        value: planSeconds,
        unit: 's',
        limit: { what: 'raw select of the same compositions (compose_each)', value: rawSeconds, unit: 's' },
        target: { text: '< 10 s', met: planSeconds < 10 },
        bound:
          "composing every node (the raw select), then reading each node's acknowledged declaration back from its signed envelope and diffing resource by resource in SQL; the CLI's start and connect",
      }),
    );
  } finally {
    await tearDown(mesh, undefined, dir);
  }
});
