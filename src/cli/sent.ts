// What a command that declares says about the declarations it sent.
import type { Declared } from '../assignment/declare.js';

export const sentLine = (sent: Declared[]) => sent.map((d) => `${d.node} serial ${d.serial}${d.sent ? '' : ` NOT SENT (${d.error})`}`).join(', ');

/** Recorded but not sent is a failure with its own exit code (3) and its remedy. */
export function mustBeSent(sent: Declared[]): void {
  if (sent.some((d) => !d.sent)) throw Object.assign(new Error('some declarations were recorded but not sent: run mesh declare again for them.'), { exitCode: 3 });
}

/** A repeated or comma-separated option (--node a --node b,c) as a list. */
export const list = (v: unknown): string[] => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).filter(Boolean));
