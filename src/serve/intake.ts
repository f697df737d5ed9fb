// P2: what one node can make mesh serve hold. Serve takes at most PREFETCH
// messages from the control queue before it settles one (the broker's count:
// RabbitMQ has no byte prefetch), and a message over its kind's limit is
// refused unread and settled at once, so what serve holds of the messages it
// handles is at most PREFETCH times the largest limit; the broker refuses
// anything larger than its max_message_size before serve sees it.
//
// A message serve cannot record (the store refusing something no code of the
// register names) is tried TRIES times, then set aside in
// inventory.dead_letter with the reason and settled: never handed back every
// second for ever. A store that is down cannot keep it either, and then it
// goes back to the queue as before: nothing is lost for a restart.
import { createHash } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import type { ControlKind } from '../broker/topology.js';
import { LIMITS, WireError } from '../wire/envelope.js';

/** Messages serve holds unsettled; the heard batch is as large. */
export const PREFETCH = 64;

/** The largest message of each kind serve reads; larger is refused unread (MSHS1). */
export const INTAKE_LIMITS: Record<ControlKind, number> = {
  heard: 1 << 10,
  enrol: 16 << 10,
  recover: 16 << 10,
  rekey: 16 << 10,
  'builder.enrol': 16 << 10,
  report: 1 << 20,
  'agent.package': 1 << 10,
  'build.result': LIMITS.message,
};

/** Tries before a message serve cannot record is set aside. */
export const TRIES = 5;

/** The refusal for a message over its kind's limit, or undefined. */
export function overLimit(msg: ConsumeMessage): WireError | undefined {
  const kind = msg.fields.routingKey as ControlKind;
  const limit = INTAKE_LIMITS[kind] ?? LIMITS.message;
  if (msg.content.length <= limit) return undefined;
  return new WireError(
    'too-large',
    `${kind} is ${msg.content.length} bytes, over mesh serve's limit of ${limit} for a ${kind}`,
    'MSHS1',
  );
}

/** How many times serve tried each message it could not record: by sender, kind and id (or content). */
export class Tries {
  private readonly counts = new Map<string, number>();
  private key(msg: ConsumeMessage): string {
    const id = msg.properties.messageId
      ? String(msg.properties.messageId)
      : createHash('sha256').update(msg.content).digest('base64');
    return `${String(msg.properties.userId ?? '')}\u0000${msg.fields.routingKey}\u0000${id}`;
  }
  /** One more failed try; returns how many so far. */
  failed(msg: ConsumeMessage): number {
    // A message another serve took, or that was set aside meanwhile, leaves its count behind: bounded here.
    if (this.counts.size > 10_000) this.counts.clear();
    const k = this.key(msg);
    const n = (this.counts.get(k) ?? 0) + 1;
    this.counts.set(k, n);
    return n;
  }
  forget(msg: ConsumeMessage): void {
    this.counts.delete(this.key(msg));
  }
}
