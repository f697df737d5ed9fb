// A mutant's verdict from its run's output (test/mutant_verdict.ts): red is a
// kill, green a survivor, and a run whose only red files ran past their time
// limit is an error to run again, never a kill.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { verdictOf } from '../mutant_verdict.js';

const V = suite("a mutant's verdict");

const run = (files: string[], tail: string) => files.join('\n') + '\n\n[run] 2 files in 80s\n' + tail + '\n';
const ok = 'ok   unit/a.test.js                 3 passed, 0 failed (1.0s)';
const red = 'FAIL unit/b.test.js                 0 passed, 1 failed (2.0s)\n     b: expected 1, got 2';
const slow =
  'FAIL console/console.test.js         4 passed, 1 failed (300.0s)\n     [run] console/console.test.js exceeded 300s and was killed';

V('a red test kills; all green survives; no totals is no verdict', () => {
  assert.equal(verdictOf(run([ok, red], '3 passed, 1 failed'), 1), { verdict: 'killed', why: 'unit/b.test.js' });
  assert.equal(verdictOf(run([ok], '3 passed, 0 failed'), 0), { verdict: 'survived', why: '3 passed, 0 failed' });
  assert.equal(verdictOf('TypeError: servers did not start', 1), null);
});

V('a suite that only ran past its limit is an error to run again, never a kill', () => {
  const v = verdictOf(run([ok, slow], '7 passed, 1 failed'), 1)!;
  assert.is(v.verdict, 'error');
  assert.match(v.why, /timed out, not a verdict: console\/console\.test\.js/);
  // Red elsewhere as well: the red test is the verdict.
  assert.equal(verdictOf(run([red, slow], '4 passed, 2 failed'), 1)!.verdict, 'killed');
});

V.run();
