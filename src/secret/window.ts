// What a rotation promises, stated: there is no window. The provider is
// declared the new credential and every earlier one a holder may still use
// (sql/provision/0004), so the consumer's old credential keeps working until
// every holder acknowledged the new one; then serve, recording the last of
// those acknowledgements, re-declares the provider without the old one
// (src/provision/settle.ts) and only then it stops working.
import type { Declared } from '../assignment/declare.js';
import type { Made } from './store_pair.js';

export function windowOf(m: Made, sent: Declared[]): string {
  const serial = (n: string) => sent.find((d) => d.node === n)?.serial;
  const side = (s: string) =>
    m.holders
      .filter((h) => h.sides.includes(s))
      .map((h) => `${h.node} (serial ${serial(h.node) ?? '?'})`)
      .join(', ') || 'no node';
  const all = m.holders.map((h) => h.node).join(', ');
  const broker = m.queuesChecked
    ? ''
    : " The broker did not answer, so no holder's queue was looked for: what is owed waits in the outbox (mesh outbox) until it is back.";
  if (m.generation === 1)
    return `first credential of ${m.consumer}: ${side('provider')} and ${side('consumer')} were sent it by this command.${broker}`;
  return (
    `no window: ${side('provider')} accepts both the old and the new credential of ${m.consumer} until every holder (${all}) acknowledged generation ${m.generation}; ` +
    `${side('consumer')} switches when it applies its new file, and the old credential stops working only when the provider is declared again without it, with no command typed.${broker}`
  );
}
