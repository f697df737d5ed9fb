// Where a command's time goes, for the benches (bench 4 splits `mesh declare`
// into its parts in the same run it measures): with MESH_PHASES=FILE a process
// writes, as it exits, the moments it passed each named phase, in ms since it
// started (performance.now()), with that start as epoch ms. Unset, phase()
// is one comparison: nothing is kept and nothing written.
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const file = process.env.MESH_PHASES;
const marks: Record<string, number> = {};

export function phase(name: string): void {
  if (file) marks[name] = performance.now();
}

if (file) {
  process.on('exit', () => {
    marks.exit = performance.now();
    const t = performance.nodeTiming;
    // Node's own start (its bootstrap) apart from the program's imports.
    const out = { origin: performance.timeOrigin, bootstrapped: t.bootstrapComplete, ...marks };
    try {
      writeFileSync(file, JSON.stringify(out) + '\n');
    } catch {
      /* a bench's aid: never the command's failure */
    }
  });
}
