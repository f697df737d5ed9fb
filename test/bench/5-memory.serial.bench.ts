// 5b. Memory of one idle `mesh-host run`: a real process, enrolled through a
// real `mesh serve`, connected, then left alone. Beside it, in the same run, a
// bare `node` process doing nothing: the floor any Node program stands on.
import { freshMesh } from '../harness/mesh.js';
import { bench, figure, sleep, envInt, rssOf, bareNodeRss, tempDir, tearDown } from './lib.js';

const SETTLE = envInt('MESH_BENCH_IDLE_SECONDS', 8);

await bench('5 idle host memory', async (figs) => {
  const root = tempDir('idle-root');
  const mesh = await freshMesh({ hostEnv: { MESH_HOST_ROOTS: root } });
  try {
    await mesh.serve();
    const { proc } = await mesh.joined('idle1');
    await sleep(SETTLE * 1000);
    const host = rssOf(proc.child.pid!);
    const bare = await bareNodeRss();
    figs.push(
      figure({
        id: 'memory.host',
        what: `idle mesh-host run RSS (after ${SETTLE}s connected)`,
        value: host.rssMB,
        unit: 'MB',
        limit: { what: 'a bare node process', value: bare, unit: 'MB' },
        target: { text: '< 60 MB', met: host.rssMB < 60 },
        bound: `peak ${host.peakMB} MB; a bare node is ${bare} MB of it (the JavaScript engine's heap and code); the rest is the modules loaded (amqplib, noble curves, the apply drivers) and one TLS connection`,
        detail: host,
      }),
    );
  } finally {
    await tearDown(mesh, undefined, root);
  }
});
