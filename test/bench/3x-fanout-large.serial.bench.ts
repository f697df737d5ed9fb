// 3x. Fan-out at 100,000 nodes: bench 3 at the size of the larger delivery target
// (test/bench/fanout.ts). Its own file, so 3d and 3e keep bench 3's 10,000.
import { bench, envInt } from './lib.js';
import { fanout } from './fanout.js';

const N = envInt('MESH_BENCH_FANOUT_LARGE_NODES', 100_000);
await bench(`3x fan-out at ${N.toLocaleString('en')} nodes`, (figs) => fanout(N, figs));
