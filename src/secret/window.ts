// The window of a rotation, stated rather than hidden: the provider changes
// the role's password when it applies its declaration, the consumer reads the
// new file when it applies its own, and the two cannot be simultaneous.
import type { Declared } from '../assignment/declare.js';
import type { Made } from '../provision/credential.js';

export function windowOf(m: Made, sent: Declared[]): string {
  const serial = (n: string) => sent.find((d) => d.node === n)?.serial;
  const side = (s: string) => m.holders.filter((h) => h.sides.includes(s)).map((h) => `${h.node} (serial ${serial(h.node) ?? '?'})`).join(', ') || 'no node';
  return `window: from when ${side('provider')} applies the new password to the role until ${side('consumer')} applies its new secret file, `
    + `new connections from ${m.consumer} are refused; both ends were sent in this command, and connections already open are not affected.`;
}
