// The broker as the mesh uses it: one topic exchange every node may write to,
// the control queue, one durable queue per node, the shared build queue.
// The control queue is bound to exactly the kinds `serve` handles, from the
// same list (src/serve/handlers.ts), so there is one place to forget a bind.
import type { Channel } from 'amqplib';

export const EXCHANGE = 'mesh';
export const CONTROL_QUEUE = 'mesh.control';
export const BUILD_QUEUE = 'mesh.build';
export const BUILD_REQUEST = 'build.request';

export async function declareTopology(ch: Channel, controlKinds: readonly string[]): Promise<void> {
  await ch.assertExchange(EXCHANGE, 'topic', { durable: true });
  await ch.assertQueue(CONTROL_QUEUE, { durable: true });
  for (const kind of controlKinds) await ch.bindQueue(CONTROL_QUEUE, EXCHANGE, kind);
  await ch.assertQueue(BUILD_QUEUE, { durable: true });
  await ch.bindQueue(BUILD_QUEUE, EXCHANGE, BUILD_REQUEST);
}
