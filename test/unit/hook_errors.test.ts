// A hook's error is never swallowed (test/harness/suite.ts): uvu's runner
// drops an error thrown in a before hook, so a file showed (0 / 1), printed
// no reason and exited 0. Each hook kind is made to throw in a tiny suite
// run in a child process through test/run.ts's own way of running and
// counting a file; the file must count failed and show the message and the
// stack. Pure: no servers.
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { suite } from '../harness/suite.js';
import { runFile } from '../harness/run_file.js';

const fixture = fileURLToPath(new URL('./fixtures/hook_throws.js', import.meta.url));
const testSource = fileURLToPath(new URL('../../../test/', import.meta.url));

const S = suite('a hook that throws fails its file, saying why');

for (const hook of ['before', 'before.each', 'after', 'after.each']) {
  S(`a ${hook} hook's error is printed with its stack and the file counts failed`, async () => {
    const o = await runFile(fixture, {
      env: { ...process.env, MESH_FIXTURE_HOOK: hook },
      limitMs: 60_000,
      label: 'hook_throws',
    });
    assert.ok(o.failed >= 1, `counted ${o.passed} passed, ${o.failed} failed:\n${o.out}`);
    assert.is.not(o.code, 0, `exit code 0:\n${o.out}`);
    assert.match(o.out, `the ${hook} hook failed on purpose`);
    assert.match(o.out, /at .*fixtures\/hook_throws\.js/); // the stack, down to the line that threw
  });
}

S('a fixture whose hooks all hold passes: the failure above is the hook, not the fixture', async () => {
  const o = await runFile(fixture, {
    env: { ...process.env, MESH_FIXTURE_HOOK: 'none' },
    limitMs: 60_000,
    label: 'hook_throws',
  });
  assert.equal([o.passed, o.failed, o.code], [2, 0, 0], o.out);
});

const bailFixture = fileURLToPath(new URL('./fixtures/bail.js', import.meta.url));
const runBail = (bail: boolean) => {
  const env = { ...process.env };
  if (bail) env.MESH_TEST_BAIL = '1';
  else delete env.MESH_TEST_BAIL;
  return runFile(bailFixture, { env, limitMs: 60_000, label: 'bail' });
};

S('MESH_TEST_BAIL: after the first red test the later bodies do not run, the after hook does', async () => {
  const o = await runBail(true);
  assert.ok(o.failed >= 1 && o.code !== 0, `counted ${o.passed} passed, ${o.failed} failed:\n${o.out}`);
  assert.not.match(o.out, 'second body ran');
  assert.match(o.out, 'after hook ran');
});

S('without MESH_TEST_BAIL every test runs after a red one', async () => {
  const o = await runBail(false);
  assert.equal([o.passed, o.failed], [1, 1], o.out);
  assert.match(o.out, 'second body ran');
});

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

S('every test file takes its suite from test/harness/suite.ts, never from uvu directly', () => {
  const bare = sources(testSource)
    .map((p) => relative(testSource, p))
    .filter((p) => p !== join('harness', 'suite.ts'))
    .filter((p) =>
      /import\s*\{[^}]*\b(suite|test)\b[^}]*\}\s*from\s*'uvu'/.test(readFileSync(join(testSource, p), 'utf8')),
    );
  assert.equal(bare, [], `import { suite } from '<depth>/harness/suite.js' in these instead`);
});

S.run();
