// The whole run in one table, from bench-results.json (each bench wrote its section).
import { readResults, render, type Figure } from './lib.js';

const r = readResults();
const run = process.env.MESH_TEST_SERVERS ?? 'direct';
if (!r || r.run !== run) {
  console.error('no results from this run in bench-results.json: every bench before this one failed');
  process.exit(1);
}
const figs: Figure[] = Object.keys(r.sections)
  .sort()
  .flatMap((k) => r.sections[k]!.figures);
const missed = figs.filter((f) => f.target && !f.target.met);
console.log(
  `\n== mesh benchmarks: ${Object.keys(r.sections).length} sections, ${figs.length} figures (bench-results.json) ==`,
);
console.log(render(figs));
console.log(
  `\n${figs.filter((f) => f.target).length - missed.length} targets met, ${missed.length} missed${missed.length ? `: ${missed.map((f) => f.what).join('; ')}` : ''}`,
);
console.log(
  'Figures are noisy when others use this 2-core machine; the ratios are measured in the same run and are the fairer reading.',
);
