// Where there is no systemd, the host restarts a service it raised that died
// (carried or declared alike: both live in its pid files), with backoff, and
// says so; one the engine removed stays gone.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { serviceDriver } from '../../host/apply/service.js';
import { removeProcess, superviseServices, type Restarted } from '../../host/apply/service_process.js';
import { sandbox, counter, starts, until, alive, type Sandbox } from './helpers.js';
import { readFileSync } from 'node:fs';

const test = suite('service supervision without systemd');
let s: Sandbox;
let sup: { stop(): void } | undefined;
let restarts: Restarted[];
let looks: number;

test.before.each(async () => {
  s = await sandbox();
  restarts = [];
  looks = 0;
});
test.after.each(async () => {
  sup?.stop();
  for (const n of ['web', 'gone']) await removeProcess(n, s.ctx()).catch(() => {});
});

const pidOf = (name: string) =>
  (JSON.parse(readFileSync(join(s.stateDir, 'services', `${name}.pid`), 'utf8')) as { pid: number }).pid;
const kill = (pid: number) => process.kill(-pid, 'SIGKILL');
const supervise = () => {
  sup = superviseServices(s.stateDir, {
    log: (l) => s.logs.push(l),
    restarted: (r) => restarts.push(r),
    looked: () => {
      looks += 1;
    },
    everyMs: 50,
    backoff: { minMs: 300, maxMs: 1200, resetAfterMs: 60_000, jitter: false },
  });
};

test('a service that died is started again from its pid file, and the restart is told', async () => {
  const count = join(s.root, 'count');
  await serviceDriver.apply(counter('web', count), s.ctx());
  supervise();
  // Its first start is on record before it dies: a loaded machine can run the kill before the shell's echo.
  await until(
    () => starts(count),
    (l) => l.length >= 1,
    10_000,
  );
  const first = pidOf('web');
  kill(first);
  await until(
    async () => restarts.length,
    (n) => n >= 1,
    10_000,
  );
  assert.equal(
    restarts.map((r) => [r.name, r.attempt]),
    [['web', 1]],
  );
  assert.ok(alive(pidOf('web')) && pidOf('web') !== first, 'a new process runs');
  assert.is(
    (
      await until(
        () => starts(count),
        (l) => l.length >= 2,
        5000,
      )
    ).length,
    2,
  );
  assert.ok(
    s.logs.some((l) => /service web had died; started it again \(attempt 1/.test(l)),
    s.logs.join('\n'),
  );
  assert.is(
    await serviceDriver.observe(counter('web', count), s.ctx()),
    'ok',
    'the restarted service is what was declared',
  );
});

test('a service that keeps dying waits longer each time (backoff doubles up to its ceiling)', async () => {
  const count = join(s.root, 'count');
  await serviceDriver.apply(counter('web', count), s.ctx());
  supervise();
  for (let i = 1; i <= 4; i++) {
    kill(pidOf('web'));
    await until(
      async () => restarts.length,
      (n) => n >= i,
      15_000,
    );
  }
  assert.equal(
    restarts.map((r) => r.nextWaitMs),
    [600, 1200, 1200, 1200],
  );
  assert.equal(
    restarts.map((r) => r.attempt),
    [1, 2, 3, 4],
  );
});

test('a service the engine removed is not started again', async () => {
  const count = join(s.root, 'count');
  await serviceDriver.apply(counter('gone', count), s.ctx());
  supervise();
  await until(
    async () => looks,
    (n) => n >= 2,
    5000,
  );
  await serviceDriver.remove(
    { id: 'service:gone', kind: 'service', target: 'gone', origin: 'declared', digest: '' },
    s.ctx(),
  );
  const at = looks;
  await until(
    async () => looks,
    (n) => n >= at + 6,
    5000,
  );
  assert.equal(restarts, []);
  assert.is((await starts(count)).length, 1);
});

test.run();
