// A mutant's verdict from its run's output (test/mutants.ts). A suite killed
// for running past its time limit is no kill: on a loaded machine a slow suite
// runs out of time whatever the mutant did, so a run whose every red file only
// timed out is an error, to run again (a journal runs errors again), never a
// kill. A mutant that truly hangs a suite shows up as that error, by name.
import type { Verdict } from './mutants_journal.js';

export function verdictOf(out: string, code: number | null): { verdict: Verdict; why: string } | null {
  const plain = out.replace(/\x1b\[[0-9;]*m/g, '');
  const totals = /^(\d+) passed, (\d+) failed/m.exec(plain);
  if (!totals) return null;
  const failing = plain
    .split('\n')
    .filter((l) => l.startsWith('FAIL '))
    .map((l) => l.slice(5).trim().split(/\s+/)[0]!);
  if (Number(totals[2]) === 0 && code === 0) return { verdict: 'survived', why: totals[0]! };
  const timedOut = new Set([...plain.matchAll(/\[run\] (\S+) exceeded (\d+)s and was killed/g)].map((m) => m[1]!));
  if (failing.length > 0 && failing.every((f) => timedOut.has(f)))
    return {
      verdict: 'error',
      why: `timed out, not a verdict: ${failing.join(', ')} ran past its limit (run it again on a quieter machine, or with a longer MESH_TEST_FILE_TIMEOUT)`,
    };
  return { verdict: 'killed', why: failing.join(', ') || `exit ${code}` };
}
