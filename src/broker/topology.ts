// The broker as the mesh uses it: one topic exchange every node may write to,
// the control queue, one durable queue per node, the shared build queue.
// The control queue is bound to exactly CONTROL_KINDS, and serve's handler
// table is typed by the same list (src/serve/handlers.ts), so a kind can't be
// handled and left unbound, which once dropped every report for an afternoon.
import type { Channel } from 'amqplib';

export const EXCHANGE = 'mesh';
export const CONTROL_QUEUE = 'mesh.control';
export const BUILD_QUEUE = 'mesh.build';
export const BUILD_REQUEST = 'build.request';

/** Every routing key the control plane consumes. Heard is batched by serve itself. */
export const CONTROL_KINDS = ['heard', 'enrol', 'report', 'recover', 'rekey', 'build.result'] as const;
export type ControlKind = typeof CONTROL_KINDS[number];

export async function declareTopology(ch: Channel): Promise<void> {
  await ch.assertExchange(EXCHANGE, 'topic', { durable: true });
  await ch.assertQueue(CONTROL_QUEUE, { durable: true });
  for (const kind of CONTROL_KINDS) await ch.bindQueue(CONTROL_QUEUE, EXCHANGE, kind);
  await ch.assertQueue(BUILD_QUEUE, { durable: true });
  await ch.bindQueue(BUILD_QUEUE, EXCHANGE, BUILD_REQUEST);
}
