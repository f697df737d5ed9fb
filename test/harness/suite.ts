// uvu's suite, with its hooks made loud. Every test file takes `suite` (or
// `test`) from here, never from 'uvu' (test/unit/hook_errors checks it).
//
// Why: uvu 0.5's runner returns from a `finally` block, so an error thrown
// in a `before` hook (or in an `after.each` on its second call) is dropped:
// the file printed `(0 / 1)` and nothing else, and exited 0. Each hook here
// prints what it threw, message and stack, naming the suite and the hook,
// and a failed hook makes the process exit 1 (uvu's own exit code counts
// failed tests only), so test/run.ts counts the file failed.
import { suite as uvuSuite, type Test, type Callback } from 'uvu';
import { inspect } from 'node:util';

let failedHooks = 0;
// uvu's exec sets process.exitCode from its tests alone, after the last suite; this runs after that.
process.on('exit', () => {
  if (failedHooks) process.exitCode = 1;
});

function loud<T>(title: string, kind: string, fn: Callback<T>): Callback<T> {
  return async (ctx) => {
    try {
      await fn(ctx);
    } catch (err) {
      failedHooks++;
      process.stderr.write(`\n  HOOK FAILED  suite "${title}", ${kind} hook threw:\n${indent(inspect(err))}\n`);
      throw err; // the runner still stops the suite: its tests would run on a context never set up
    }
  };
}

const indent = (s: string) =>
  s
    .split('\n')
    .map((l) => '    ' + l)
    .join('\n');

export function suite<T = Record<string, any>>(title = '', context?: T): Test<T> {
  const s = uvuSuite<T>(title, context);
  const { before, after } = s;
  s.before = Object.assign((fn: Callback<T>) => before(loud(title, 'before', fn)), {
    each: (fn: Callback<T>) => before.each(loud(title, 'before.each', fn)),
  });
  s.after = Object.assign((fn: Callback<T>) => after(loud(title, 'after', fn)), {
    each: (fn: Callback<T>) => after.each(loud(title, 'after.each', fn)),
  });
  if (!process.env.MESH_TEST_BAIL) return s;
  // A mutant's run (test/mutants.ts) needs one red test, not all of them: after the first failure the
  // file's later tests return at once, and its `after` hooks still run, so nothing it started is left.
  const bailing = ((name: string, fn: Callback<T>) =>
    s(name, async (ctx) => {
      if (failedTests) return;
      try {
        await fn(ctx);
      } catch (err) {
        failedTests++;
        throw err;
      }
    })) as Test<T>;
  return Object.assign(bailing, s);
}

let failedTests = 0;

/** uvu's unnamed suite, for a file of a few tests. */
export const test = suite();
