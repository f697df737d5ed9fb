// L1 as pure logic: the waits between attempts, and when they start again
// from the bottom. The clock is a number we move by hand.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { Backoff, DEFAULT_BACKOFF, backoffFromEnv } from '../../src/sys/backoff.js';

const B = suite('backoff (L1)');

const waits = (b: Backoff, n: number) => Array.from({ length: n }, () => b.next() / 1000);

B('from 2 s doubling to 2 min, and staying there', () => {
  assert.equal(waits(new Backoff(), 9), [2, 4, 8, 16, 32, 64, 120, 120, 120]);
});

B('peek tells the next wait without moving', () => {
  const b = new Backoff();
  b.next();
  assert.is(b.peek(), 4000);
  assert.is(b.peek(), 4000);
  assert.is(b.next(), 4000);
});

B('a connection that held 30 s starts the waits again from 2 s', () => {
  let clock = 1_000_000;
  const b = new Backoff();
  waits(b, 5); // 2 .. 32: the next would be 64
  b.connected(clock);
  clock += 30_000;
  b.disconnected(clock);
  assert.equal(waits(b, 3), [2, 4, 8]);
});

B('a connection that dropped before 30 s does not reset: a flapping link keeps slowing down', () => {
  let clock = 5_000;
  const b = new Backoff();
  assert.equal(waits(b, 3), [2, 4, 8]);
  b.connected(clock);
  clock += 29_999;
  b.disconnected(clock);
  assert.equal(waits(b, 2), [16, 32]);
  // And again: many short connections never add up to a held one.
  for (let i = 0; i < 10; i++) {
    b.connected(clock);
    clock += 20_000;
    b.disconnected(clock);
  }
  assert.is(b.next(), 64_000);
});

B('a loss without a connection (a failed attempt) never resets', () => {
  const b = new Backoff();
  waits(b, 4);
  b.disconnected(10_000_000);
  assert.is(b.next(), 32_000);
});

B('each connection is timed from its own start, not an earlier one', () => {
  const b = new Backoff();
  waits(b, 4); // next 32
  b.connected(0);
  b.disconnected(10_000); // held 10 s
  b.connected(100_000);
  b.disconnected(110_000); // held 10 s, though 110 s after the first began
  assert.is(b.next(), 32_000);
});

B('the settings come from the environment, in seconds, with the defaults above', () => {
  assert.equal(backoffFromEnv({}), DEFAULT_BACKOFF);
  assert.equal(DEFAULT_BACKOFF, { minMs: 2_000, maxMs: 120_000, resetAfterMs: 30_000 });
  const s = backoffFromEnv({
    MESH_HOST_BACKOFF_MIN_SECONDS: '0.5',
    MESH_HOST_BACKOFF_MAX_SECONDS: '3',
    MESH_HOST_BACKOFF_RESET_SECONDS: '1',
  });
  assert.equal(s, { minMs: 500, maxMs: 3_000, resetAfterMs: 1_000 });
  assert.equal(waits(new Backoff(s), 5), [0.5, 1, 2, 3, 3]);
});

B('nonsense settings are refused, naming the variable', () => {
  assert.throws(
    () => backoffFromEnv({ MESH_HOST_BACKOFF_MIN_SECONDS: 'soon' }),
    /MESH_HOST_BACKOFF_MIN_SECONDS must be a positive number.*\(MSHG4\)/,
  );
  assert.throws(
    () => backoffFromEnv({ MESH_HOST_BACKOFF_MAX_SECONDS: '0' }),
    /MESH_HOST_BACKOFF_MAX_SECONDS must be a positive number/,
  );
  assert.throws(
    () => backoffFromEnv({ MESH_HOST_BACKOFF_RESET_SECONDS: '-1' }),
    /MESH_HOST_BACKOFF_RESET_SECONDS must be a positive number/,
  );
  assert.throws(
    () => backoffFromEnv({ MESH_HOST_BACKOFF_MIN_SECONDS: '10', MESH_HOST_BACKOFF_MAX_SECONDS: '5' }),
    /above MESH_HOST_BACKOFF_MAX_SECONDS.*\(MSHG5\)/,
  );
});

B.run();
