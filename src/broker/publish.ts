// The one confirmed publish (R1, W1): a message is sent only when the broker
// confirmed it, and with `mandatory` a message no queue took is said, not
// dropped. RabbitMQ sends a return before the confirm of the same message on
// the same channel, so when the confirm arrives the return (if any) is known.
import { randomUUID } from 'node:crypto';
import type { ConfirmChannel, ConsumeMessage, Options } from 'amqplib';

/** The broker confirmed the message, but no queue was bound to take it. */
export class Unroutable extends Error {}
/** The broker did not confirm the message (nacked, or the channel went). */
export class NotConfirmed extends Error {}

// Returned message ids of each channel, listened for once per channel.
const returnedOn = new WeakMap<ConfirmChannel, Set<string>>();

function returned(ch: ConfirmChannel): Set<string> {
  let ids = returnedOn.get(ch);
  if (!ids) {
    const set = new Set<string>();
    ch.on('return', (m: ConsumeMessage) => {
      if (m.properties.messageId !== undefined) set.add(String(m.properties.messageId));
    });
    returnedOn.set(ch, set);
    ids = set;
  }
  return ids;
}

/** Where a message was going, as a person reads it: the queue (default exchange) or the routing key. */
export function destination(exchange: string, key: string): string {
  return exchange === '' ? `queue ${key}` : `routing key ${key} on exchange ${exchange}`;
}

/**
 * W3: the one delivery mode of everything the control plane sends a node
 * (declarations from the outbox, serve's answers to recover, enrol and rekey):
 * not persistent. SQL keeps what a node is owed and a host asks for its newest
 * on every connect, so a broker restart, which drops every message that is not
 * persistent, leaves a node's queue empty rather than holding older
 * declarations whose newer ones it lost (which the host would then refuse as
 * replayed). One mode for all: a mix is exactly what leaves the older behind.
 * docs/design.md says why not persistent everywhere.
 */
export const NODE_DELIVERY = { persistent: false } as const;

/** What a publish to a node may set: everything but how it is delivered, which is NODE_DELIVERY's. */
export type NodePublish = Omit<Options.Publish, 'persistent' | 'deliveryMode'>;

/** Publish to a node (its queue, or the direct reply-to it asked on) in the one delivery mode, with confirms. */
export function toNode(ch: ConfirmChannel, queue: string, body: Buffer, props: NodePublish = {}): Promise<void> {
  return publish(ch, '', queue, body, { ...props, ...NODE_DELIVERY });
}

/**
 * Publish persistent unless PROPS say otherwise, wait for the broker's confirm. With `mandatory`, a
 * message no queue took rejects with Unroutable; without it the broker drops
 * such a message silently, so only use that where nobody may be listening.
 */
export function publish(
  ch: ConfirmChannel,
  exchange: string,
  key: string,
  body: Buffer,
  props: Options.Publish = {},
): Promise<void> {
  const messageId = props.messageId ?? (props.mandatory ? randomUUID() : undefined);
  const back = props.mandatory ? returned(ch) : undefined;
  return new Promise((resolve, reject) => {
    const done = (err: unknown) => {
      if (err)
        return reject(
          new NotConfirmed(`the broker did not confirm the message to ${destination(exchange, key)}`, { cause: err }),
        );
      if (back && back.delete(messageId!))
        return reject(new Unroutable(`no queue took the message to ${destination(exchange, key)}`));
      resolve();
    };
    try {
      ch.publish(exchange, key, body, { persistent: true, ...props, messageId }, done);
    } catch (err) {
      // A closed channel throws at once rather than calling back.
      done(err);
    }
  });
}
