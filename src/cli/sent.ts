// What a command that declares says about the declarations it queued: owed in
// SQL once it returns, published by mesh serve (W1).
import type { Declared } from '../assignment/declare.js';

export const sentLine = (sent: Declared[]) =>
  sent.length ? `queued ${sent.map((d) => `${d.node} serial ${d.serial}`).join(', ')}` : 'nothing queued';

/** A repeated or comma-separated option (--node a --node b,c) as a list. */
export const list = (v: unknown): string[] =>
  v === undefined ? [] : (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).filter(Boolean);
