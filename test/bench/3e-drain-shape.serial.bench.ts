// serve's drain at bench 3's fleet, in process, its shape taking turns in one
// run (the machine is shared: compare within a run, never across): rows a
// batch and batches in flight, beside the raw publish+confirm of the same
// envelopes to the same queues over the same channels (not persistent, as the
// drain publishes). Each round records 10,000 declarations (declare()), then
// drains them as serve does; PostgreSQL's CPU per declaration beside each.
import { freshMesh } from '../harness/mesh.js';
import { declare } from '../../src/assignment/declare.js';
import { connect } from '../../src/store/connect.js';
import { drainOnce, takeTurns, PUBLISH_CHANNELS } from '../../src/serve/drain.js';
import { publishAll } from './steps.js';
import {
  bench,
  now,
  envInt,
  tempDir,
  createQueues,
  purgeQueues,
  admin,
  cpuMeter,
  serverPids,
  settle,
  figure,
  tearDown,
  fanoutFleet,
} from './lib.js';

const N = envInt('MESH_BENCH_FANOUT_NODES', 10_000);
const ROUNDS = envInt('MESH_PROBE_ROUNDS', 2);
// batch x lanes; the first is the drain's own today.
const SHAPES = (process.env.MESH_PROBE_SHAPES ?? '500x3,1000x3,2000x2,1000x5')
  .split(',')
  .map((s) => s.split('x').map(Number) as [number, number]);

await bench('3e drain shape', async (figs) => {
  const mesh = await freshMesh();
  const root = tempDir('drain-root');
  try {
    const names = await fanoutFleet(mesh, N, root);
    await createQueues(mesh, names);
    Object.assign(process.env, mesh.env);
    const asg = await connect('assignment', { env: mesh.env, max: 8 });
    const conn = await admin(mesh);
    const chs = await Promise.all(Array.from({ length: PUBLISH_CHANNELS }, () => conn.createConfirmChannel()));
    const rabbit = serverPids().rabbit;
    const meter = () =>
      cpuMeter({ postgres: () => serverPids().pg, rabbitmq: () => rabbit, self: () => [process.pid] });
    const sums: Record<string, number[]> = {};
    const note = (k: string, v: number) => {
      (sums[k] ??= []).push(v);
    };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [batch, lanes] of SHAPES) {
        await declare({ signer: mesh.signer });
        await settle(rabbit);
        const m = meter();
        const t0 = now();
        let total = 0;
        // The lanes take in turn, as serve's do.
        const turn = takeTurns();
        await Promise.all(
          Array.from({ length: lanes }, async () => {
            for (;;) {
              const x = await drainOnce(asg, chs, { batch, turn });
              total += x.delivered;
              if (x.taken < batch) break;
            }
          }),
        );
        const secs = (now() - t0) / 1000;
        const c = m.stop();
        if (total !== N) throw new Error(`drained ${total} of ${N}`);
        const pgms = (c.cores.postgres! * c.seconds * 1000) / total;
        note(`drain ${batch}x${lanes} /s`, total / secs);
        console.log(
          `[drain] round ${r} ${batch}x${lanes}: ${(total / secs).toFixed(0)}/s; pg ${pgms.toFixed(3)} ms/row, rabbit ${c.cores.rabbitmq}, self ${c.cores.self} cores`,
        );
        await purgeQueues(mesh, names);
      }
      // Raw: the newest envelopes, the same queues and channels, all at once.
      const rows =
        await asg`select d.node, d.envelope from assignment.declaration d join assignment.node_serial s on s.node = d.node and s.serial = d.serial order by d.node`;
      await settle(rabbit);
      const rate = await publishAll(
        chs,
        rows.map((x) => x.node as string),
        rows.map((x) => x.envelope as Buffer),
        false,
      );
      note('raw publish+confirm /s', rate);
      console.log(`[drain] round ${r} raw: ${rate.toFixed(0)}/s`);
      await purgeQueues(mesh, names);
    }
    for (const [k, v] of Object.entries(sums))
      figs.push(figure({ id: `drain.${k}`, what: k, value: v.reduce((a, b) => a + b, 0) / v.length, unit: '/s' }));
    await conn.close();
    await asg.end();
  } finally {
    await tearDown(mesh, undefined, root);
  }
});
