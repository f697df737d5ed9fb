// L1 as pure logic: the waits between attempts, and when they start again
// from the bottom. The clock is a number we move by hand; the jitter's
// randomness is seeded, so every run draws the same waits.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { Backoff, DEFAULT_BACKOFF, backoffFromEnv, seededRandom } from '../../src/sys/backoff.js';

const B = suite('backoff (L1)');

/** The plain doubling, where a test names each wait. */
const PLAIN = { ...DEFAULT_BACKOFF, jitter: false };
const plain = () => new Backoff(PLAIN);

const waits = (b: Backoff, n: number) => Array.from({ length: n }, () => b.next() / 1000);

B('without jitter: from 2 s doubling to 2 min, and staying there', () => {
  assert.equal(waits(plain(), 9), [2, 4, 8, 16, 32, 64, 120, 120, 120]);
});

B('with jitter, every wait is at least the floor, at most the ceiling, and at most three times the one before', () => {
  const rnd = seededRandom(7);
  for (let c = 0; c < 200; c++) {
    const b = new Backoff(DEFAULT_BACKOFF, rnd);
    let prev = DEFAULT_BACKOFF.minMs;
    for (let i = 0; i < 12; i++) {
      const w = b.next();
      assert.ok(w >= 2_000 && w <= 120_000, `wait ${w} ms outside 2 s .. 2 min`);
      assert.ok(w <= prev * 3, `wait ${w} ms more than three times ${prev} ms`);
      prev = w;
    }
  }
});

/** When each of N clients that lost the broker at 0 makes its Kth attempt, in ms. */
function attemptTimes(n: number, k: number, jitter: boolean, seed: number): number[] {
  const rnd = seededRandom(seed);
  return Array.from({ length: n }, () => {
    const b = new Backoff({ ...DEFAULT_BACKOFF, jitter }, rnd);
    let t = 0;
    for (let i = 0; i < k; i++) t += b.next();
    return t;
  });
}

/** How many of TIMES fall in each of BUCKETS equal slices of [lo, hi). */
function histogram(times: number[], lo: number, hi: number, buckets: number): number[] {
  const h = new Array<number>(buckets).fill(0);
  for (const t of times) h[Math.min(buckets - 1, Math.floor(((t - lo) / (hi - lo)) * buckets))]!++;
  return h;
}

B('a thousand clients that lost the broker at once spread their first retry over 2-6 s, not all at 2 s', () => {
  const bunched = attemptTimes(1000, 1, false, 1);
  assert.equal(new Set(bunched).size, 1, 'without jitter they all come back in the same instant');
  const spread = attemptTimes(1000, 1, true, 1);
  // Drawn to the millisecond over a 4 s window: about 885 distinct of 1000 is what chance gives.
  assert.ok(new Set(spread).size > 800, `only ${new Set(spread).size} distinct retry times of 1000`);
  // Four one-second slices of the window: each holds roughly a quarter, none the bunch.
  const h = histogram(spread, 2_000, 6_000, 4);
  assert.ok(
    h.every((c) => c >= 150 && c <= 350),
    `first retries by second of the window: ${h.join(', ')}`,
  );
});

B('their later retries stay spread too: the fourth attempts of a thousand clients fill their window', () => {
  const times = attemptTimes(1000, 4, true, 2);
  const lo = Math.min(...times);
  const hi = Math.max(...times);
  assert.ok(hi - lo > 60_000, `fourth attempts span only ${hi - lo} ms`);
  // No one-second slice of it holds more than a tenth of the fleet.
  const h = histogram(times, lo, hi + 1, Math.ceil((hi - lo) / 1000));
  assert.ok(Math.max(...h) <= 100, `the busiest second holds ${Math.max(...h)} clients`);
});

B('the same seed draws the same waits', () => {
  assert.equal(attemptTimes(50, 3, true, 9), attemptTimes(50, 3, true, 9));
  assert.not.equal(attemptTimes(50, 3, true, 9), attemptTimes(50, 3, true, 10));
});

B('peek tells the next wait without moving', () => {
  const j = new Backoff(DEFAULT_BACKOFF, seededRandom(3));
  j.next();
  const ahead = j.peek();
  assert.is(j.peek(), ahead);
  assert.is(j.next(), ahead);
  const b = plain();
  b.next();
  assert.is(b.peek(), 4000);
  assert.is(b.peek(), 4000);
  assert.is(b.next(), 4000);
});

B('a connection that held 30 s starts the waits again from 2 s', () => {
  let clock = 1_000_000;
  const b = plain();
  waits(b, 5); // 2 .. 32: the next would be 64
  b.connected(clock);
  clock += 30_000;
  b.disconnected(clock);
  assert.equal(waits(b, 3), [2, 4, 8]);
});

B('a connection that dropped before 30 s does not reset: a flapping link keeps slowing down', () => {
  let clock = 5_000;
  const b = plain();
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
  const b = plain();
  waits(b, 4);
  b.disconnected(10_000_000);
  assert.is(b.next(), 32_000);
});

B('each connection is timed from its own start, not an earlier one', () => {
  const b = plain();
  waits(b, 4); // next 32
  b.connected(0);
  b.disconnected(10_000); // held 10 s
  b.connected(100_000);
  b.disconnected(110_000); // held 10 s, though 110 s after the first began
  assert.is(b.next(), 32_000);
});

B('the settings come from the environment, in seconds, with the defaults above', () => {
  assert.equal(backoffFromEnv({}), DEFAULT_BACKOFF);
  assert.equal(DEFAULT_BACKOFF, { minMs: 2_000, maxMs: 120_000, resetAfterMs: 30_000, jitter: true });
  const s = backoffFromEnv({
    MESH_HOST_BACKOFF_MIN_SECONDS: '0.5',
    MESH_HOST_BACKOFF_MAX_SECONDS: '3',
    MESH_HOST_BACKOFF_RESET_SECONDS: '1',
    MESH_HOST_BACKOFF_JITTER: 'none',
  });
  assert.equal(s, { minMs: 500, maxMs: 3_000, resetAfterMs: 1_000, jitter: false });
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
  assert.throws(
    () => backoffFromEnv({ MESH_HOST_BACKOFF_JITTER: 'full' }),
    /MESH_HOST_BACKOFF_JITTER must be decorrelated or none, not "full".*\(MSHK7\)/,
  );
  assert.equal(backoffFromEnv({ MESH_HOST_BACKOFF_JITTER: 'decorrelated' }).jitter, true);
});

B.run();
