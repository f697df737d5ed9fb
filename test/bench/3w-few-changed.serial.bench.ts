// 3w. A change that touches few nodes costs little (W2): bench 3's fleet
// made in SQL (MESH_BENCH_FEW_NODES, 100,000 by default: the fleet the target
// is set for), one module placed on 100 of them (MESH_BENCH_FEW_CHANGED),
// every node declared once. Then the module's file changes: the real `mesh module
// add`, from its spawn until its command returned (SQL committed) and until
// serve delivered every declaration it owed. Beside it, in the same run: the
// raw compose of those 100 alone, the raw compose of the whole fleet (what the
// step cost when it composed every node), and the CLI's start (`mesh --help`).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshMesh, MESH, runCli, type Proc } from '../harness/mesh.js';
import { connect } from '../../src/store/connect.js';
import { b64 } from '../../src/crypto/keys.js';
import {
  bench,
  figure,
  now,
  sleep,
  envInt,
  createQueues,
  startServe,
  tempDir,
  nodeNameOf,
  tearDown,
  fanoutFleet,
} from './lib.js';

const N = envInt('MESH_BENCH_FEW_NODES', 100_000);
const CHANGED = envInt('MESH_BENCH_FEW_CHANGED', 100);

await bench('3w a change to few nodes', async (figs) => {
  const mesh = await freshMesh();
  const dir = tempDir('few');
  const root = tempDir('few-root');
  let serve: Proc | undefined;
  try {
    await fanoutFleet(mesh, N, root);
    const mod = (v: string) => {
      const f = join(dir, 'app.json');
      writeFileSync(
        f,
        JSON.stringify({
          name: 'app',
          resources: [{ kind: 'file', path: '/etc/app.conf', content: b64(Buffer.from(v)), mode: '0644' }],
        }),
      );
      return f;
    };
    const ok = async (args: string[]) => {
      const r = await runCli(MESH, args, mesh.env);
      if (r.code !== 0) throw new Error(`mesh ${args.join(' ')}: ${r.stderr}`);
      return r;
    };
    // Placed on nodes past the sites' dialable ones: plain spokes.
    const placed = Array.from({ length: CHANGED }, (_, i) => nodeNameOf(1000 + i));
    await ok(['module', 'add', mod('v1')]);
    await mesh.store.admin`insert into assignment.assignment (module, node) select 'app', unnest(${placed}::text[])`;
    await ok(['declare', '--all']);
    // What the fleet was owed counts as delivered: only the change's own declarations are waited for.
    await mesh.store.admin`update assignment.outbox set delivered_at = now() where delivered_at is null`;
    await createQueues(mesh, placed);
    // A serve starting beside 100,000 nodes' outbox on a shared machine may take more than a minute to consume.
    serve = await startServe(mesh, undefined, 300_000);

    const asg = await connect('assignment', { env: mesh.env, max: 1 });
    const t = async (f: () => Promise<unknown>) => {
      const t0 = now();
      await f();
      return (now() - t0) / 1000;
    };
    const few = await t(() => asg`select node from assignment.compose_each(${placed}::text[])`);
    const fleet = await t(() => asg`select node from assignment.compose_each(null)`);
    await asg.end();
    const help = await t(() => runCli(MESH, ['--help'], mesh.env));

    const c0 = now();
    const r = await ok(['module', 'add', mod('v2'), '--json']);
    const committed = (now() - c0) / 1000;
    const redeclared = (JSON.parse(r.stdout) as { redeclared: unknown[] }).redeclared.length;
    if (redeclared !== CHANGED) throw new Error(`module add re-declared ${redeclared} nodes, not ${CHANGED}`);
    for (let i = 0; ; i++) {
      const [row] = await mesh.store.admin`select count(*)::int as n from assignment.outbox where delivered_at is null`;
      if (row!.n === 0) break;
      if (i > 60_000 / 5) throw new Error(`${row!.n} declarations still owed after 60 s`);
      await sleep(5);
    }
    const delivered = (now() - c0) / 1000;
    console.log(
      `[few] ${CHANGED} of ${N}: committed ${committed.toFixed(2)}s, delivered ${delivered.toFixed(2)}s; compose of ${CHANGED} ${few.toFixed(3)}s, of ${N} ${fleet.toFixed(2)}s`,
    );
    figs.push(
      figure({
        id: 'few.delivered',
        what: `mesh module add changing ${CHANGED} of ${N} nodes, spawn until every one is delivered`,
        value: delivered,
        unit: 's',
        limit: { what: `the CLI's start (mesh --help) + raw compose of the ${CHANGED}`, value: help + few, unit: 's' },
        target: { text: '< 1 s', met: delivered < 1 },
        bound: `committed at ${committed.toFixed(2)}s; the raw compose of all ${N} would take ${fleet.toFixed(2)}s`,
        detail: { committed, few, fleet, help },
      }),
    );
    figs.push(
      figure({
        id: 'few.compose',
        what: `raw compose of the ${CHANGED} a change touches`,
        value: few,
        unit: 's',
        limit: { what: `raw compose of all ${N}`, value: fleet, unit: 's' },
      }),
    );
  } finally {
    await tearDown(mesh, serve, dir, root);
  }
});
