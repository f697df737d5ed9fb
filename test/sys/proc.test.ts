// The one process runner (src/sys/proc.ts): a program that is not there and
// a program that ran and refused are different sentences; a hung program is
// killed at its deadline and said to be; stdin and lines reach their ends.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { run, runAny, RunError, RunAbandoned } from '../../src/sys/proc.js';

const P = suite('one process runner');

P('a program that is not installed is "could not start", naming it and the remedy', async () => {
  const err = await run('mesh-no-such-program', ['x']).then(
    () => null,
    (e: Error) => e,
  );
  assert.instance(err, RunError);
  assert.match(err!.message, /^could not start mesh-no-such-program \(ENOENT\): is it installed/);
  // runAny has no exit code to give either: it rejects the same way.
  const any = await runAny('mesh-no-such-program', []).then(
    () => null,
    (e: Error) => e,
  );
  assert.instance(any, RunError);
});

P('a program that ran and failed is "exited N" with the end of its stderr', async () => {
  const script = 'for i in 1 2 3 4 5 6 7 8; do echo "line $i" >&2; done; exit 3';
  const err = await run('sh', ['-c', script]).then(
    () => null,
    (e: Error) => e,
  );
  assert.ok(err, 'it rejects');
  assert.not.instance(err, RunError, 'not a could-not-start');
  assert.match(err!.message, /^sh -c .* exited 3: /);
  assert.match(err!.message, /line 8$/, 'the last line it said');
  assert.not.match(err!.message, /line 2\b/, 'only the tail');
  const r = await runAny('sh', ['-c', script]);
  assert.is(r.code, 3, 'runAny resolves with the exit code');
});

P('a program past its deadline is killed and said to be', async () => {
  const err = await run('sleep', ['30'], { timeoutMs: 200 }).then(
    () => null,
    (e: Error) => e,
  );
  assert.instance(err, RunError);
  assert.match(err!.message, /sleep 30 did not finish within 0.2s and was killed/);
});

P('stdin is given and stdout returned; lines arrive as said, a last line without newline too', async () => {
  assert.is(await run('cat', [], { input: 'to and fro\n' }), 'to and fro\n');
  const lines: string[] = [];
  const r = await runAny('sh', ['-c', 'echo one; echo two >&2; printf three'], { onLine: (l) => lines.push(l) });
  assert.is(r.code, 0);
  assert.equal(lines.sort(), ['one', 'three', 'two']);
  assert.is(r.stdout, 'one\nthree', 'output is still kept');
});

P('an abandoned run ends the program and rejects as abandoned', async () => {
  const stop = new AbortController();
  const running = runAny('sleep', ['30'], { signal: stop.signal });
  setTimeout(() => stop.abort(), 100);
  const err = await running.then(
    () => null,
    (e: Error) => e,
  );
  assert.instance(err, RunAbandoned);
});

P.run();
