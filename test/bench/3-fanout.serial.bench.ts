// 3. Fan-out at 10,000 nodes (test/bench/fanout.ts says what it measures).
import { bench, envInt } from './lib.js';
import { fanout } from './fanout.js';

await bench('3 fan-out and serve memory', (figs) => fanout(envInt('MESH_BENCH_FANOUT_NODES', 10_000), figs));
