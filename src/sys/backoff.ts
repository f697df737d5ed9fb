// L1: reconnect from 2 s doubling to 2 min, reset only once a connection has
// held 30 s. Without the reset condition, a node that reconnects and drops at
// once would retry at full speed for ever; without the reset at all, it would
// stay at two minutes long after the cause was gone.
//
// Jitter, decorrelated (each wait drawn between the floor and three times the
// last one, never above the ceiling): a fleet that lost its broker at the same
// instant would otherwise come back in bunches at 2, 4, 8 s, each bunch asking
// for recover at once. Decorrelated rather than full jitter because full
// jitter draws from zero up: the first retry after a common loss could come at
// once, below the 2 s floor that keeps a refusing broker from being hammered;
// decorrelated keeps the floor and still spreads from the very first retry.
// The draw is bounded by the ceiling before it is made, not clipped after, so
// a fleet at the ceiling stays spread instead of piling onto 2 min exactly.
// Without jitter (MESH_HOST_BACKOFF_JITTER=none) the waits are the plain
// doubling: for a test that must name each wait, and for a bench to compare.
import { refuse } from './errors.js';

export interface BackoffSettings {
  minMs: number;
  maxMs: number;
  resetAfterMs: number;
  /** Decorrelated jitter on each wait; false gives the plain doubling. */
  jitter: boolean;
}

export const DEFAULT_BACKOFF: BackoffSettings = { minMs: 2_000, maxMs: 120_000, resetAfterMs: 30_000, jitter: true };

/** A seeded source of numbers in [0, 1) (mulberry32): the same seed draws the same waits, for tests and benches. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Backoff {
  /** The last wait handed out; none since the start or the last reset. */
  private last: number | undefined;
  private upcoming: number;
  private connectedAt: number | undefined;

  constructor(
    private readonly s: BackoffSettings = DEFAULT_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {
    this.upcoming = this.draw();
  }

  private draw(): number {
    const { minMs, maxMs } = this.s;
    if (!this.s.jitter) return this.last === undefined ? minMs : Math.min(this.last * 2, maxMs);
    const hi = Math.min(maxMs, (this.last ?? minMs) * 3);
    return Math.round(minMs + this.random() * (hi - minMs));
  }

  /** The wait before the next attempt; the one after is drawn from a window up to three times as long. */
  next(): number {
    const d = this.upcoming;
    this.last = d;
    this.upcoming = this.draw();
    return d;
  }

  /** What the next wait will be, without moving. */
  peek(): number {
    return this.upcoming;
  }

  connected(now: number): void {
    this.connectedAt = now;
  }

  /** A connection ended: if it held long enough, start again from the bottom. */
  disconnected(now: number): void {
    if (this.connectedAt !== undefined && now - this.connectedAt >= this.s.resetAfterMs) {
      this.last = undefined;
      this.upcoming = this.draw();
    }
    this.connectedAt = undefined;
  }
}

export function backoffFromEnv(env: NodeJS.ProcessEnv = process.env): BackoffSettings {
  const num = (name: string, d: number) => {
    const v = env[name];
    if (v === undefined || v === '') return d;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0)
      throw refuse('MSHG4', `${name} must be a positive number of seconds, not ${JSON.stringify(v)}`);
    return n * 1000;
  };
  const j = env.MESH_HOST_BACKOFF_JITTER ?? '';
  if (!['', 'decorrelated', 'none'].includes(j))
    throw refuse('MSHK7', `MESH_HOST_BACKOFF_JITTER must be decorrelated or none, not ${JSON.stringify(j)}`);
  const s = {
    minMs: num('MESH_HOST_BACKOFF_MIN_SECONDS', DEFAULT_BACKOFF.minMs),
    maxMs: num('MESH_HOST_BACKOFF_MAX_SECONDS', DEFAULT_BACKOFF.maxMs),
    resetAfterMs: num('MESH_HOST_BACKOFF_RESET_SECONDS', DEFAULT_BACKOFF.resetAfterMs),
    jitter: j !== 'none',
  };
  // A floor above the ceiling would make the first wait longer than the longest.
  if (s.minMs > s.maxMs)
    throw refuse(
      'MSHG5',
      `MESH_HOST_BACKOFF_MIN_SECONDS (${s.minMs / 1000}) is above MESH_HOST_BACKOFF_MAX_SECONDS (${s.maxMs / 1000})`,
    );
  return s;
}
