// L1: reconnect from 2 s doubling to 2 min, reset only once a connection has
// held 30 s. Without the reset condition, a node that reconnects and drops at
// once would retry at full speed for ever; without the reset at all, it would
// stay at two minutes long after the cause was gone.
import { refuse } from './errors.js';

export interface BackoffSettings {
  minMs: number;
  maxMs: number;
  resetAfterMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { minMs: 2_000, maxMs: 120_000, resetAfterMs: 30_000 };

export class Backoff {
  private current: number;
  private connectedAt: number | undefined;

  constructor(private readonly s: BackoffSettings = DEFAULT_BACKOFF) {
    this.current = s.minMs;
  }

  /** The wait before the next attempt; the one after is twice as long. */
  next(): number {
    const d = this.current;
    this.current = Math.min(this.current * 2, this.s.maxMs);
    return d;
  }

  /** What the next wait would be, without moving. */
  peek(): number {
    return this.current;
  }

  connected(now: number): void {
    this.connectedAt = now;
  }

  /** A connection ended: if it held long enough, start again from the bottom. */
  disconnected(now: number): void {
    if (this.connectedAt !== undefined && now - this.connectedAt >= this.s.resetAfterMs) this.current = this.s.minMs;
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
  const s = {
    minMs: num('MESH_HOST_BACKOFF_MIN_SECONDS', DEFAULT_BACKOFF.minMs),
    maxMs: num('MESH_HOST_BACKOFF_MAX_SECONDS', DEFAULT_BACKOFF.maxMs),
    resetAfterMs: num('MESH_HOST_BACKOFF_RESET_SECONDS', DEFAULT_BACKOFF.resetAfterMs),
  };
  // A floor above the ceiling would make the first wait longer than the longest.
  if (s.minMs > s.maxMs)
    throw refuse(
      'MSHG5',
      `MESH_HOST_BACKOFF_MIN_SECONDS (${s.minMs / 1000}) is above MESH_HOST_BACKOFF_MAX_SECONDS (${s.maxMs / 1000})`,
    );
  return s;
}
