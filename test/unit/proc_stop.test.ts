// A test's process stopped past its grace goes with everything it started:
// an orphan would keep the pipes of the test's output open, and the test's
// own process could never end (the suite then hangs to the runner's limit).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { spawnProc } from '../harness/mesh.js';

const P = suite('Proc.stop');

/** Running, not gone and not a zombie waiting for init to reap it. */
const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

P('a process that ignores SIGTERM is killed at its grace, and the process it started with it', async () => {
  // SIGTERM ignored is inherited: neither the shell nor its sleep ends on it.
  const p = spawnProc('bash', ['-c', 'trap "" TERM; sleep 600 & echo "started $!"; wait'], process.env);
  const grandchild = Number((await p.waitFor(/started (\d+)/))[1]);
  try {
    assert.ok(alive(grandchild));
    await p.stop();
    // Its SIGKILL went with its parent's; it may take a moment to land.
    for (let i = 0; i < 50 && alive(grandchild); i++) await new Promise((r) => setTimeout(r, 100));
    assert.not.ok(alive(grandchild), 'the sleep it started is gone too, within 5 s of its parent');
  } finally {
    if (alive(grandchild)) process.kill(grandchild, 'SIGKILL');
  }
});

P.run();
