// The broker as the mesh uses it: one topic exchange every node may write to,
// the control queue, one durable queue per node, the shared build queue.
// The control queue is bound to exactly CONTROL_KINDS, and serve's handler
// table is typed by the same list (src/serve/handlers.ts), so a kind can't be
// handled and left unbound, which once dropped every report for an afternoon.
//
// mesh.control and mesh.build are quorum queues: replicated on
// every broker node, so a node's death loses neither. A mesh made before them
// has them classic, and a queue's type cannot change; they move under their
// own names without losing a message (moveToQuorum, finishMove below).
import type { Channel } from 'amqplib';
import type { Connection } from './connect.js';

export const EXCHANGE = 'mesh';
export const CONTROL_QUEUE = 'mesh.control';
export const BUILD_QUEUE = 'mesh.build';
export const BUILD_REQUEST = 'build.request';

/** Every routing key the control plane consumes. Heard is batched by serve itself. */
export const CONTROL_KINDS = [
  'heard',
  'enrol',
  'report',
  'recover',
  'rekey',
  'build.result',
  'builder.enrol',
  'agent.package',
] as const;
export type ControlKind = (typeof CONTROL_KINDS)[number];

/** The quorum queues and the routing keys bound to each. */
export const SHARED_QUEUES: Record<string, readonly string[]> = {
  [CONTROL_QUEUE]: CONTROL_KINDS,
  [BUILD_QUEUE]: [BUILD_REQUEST],
};

/** Where a classic queue's traffic goes while it moves to quorum under its own name. */
export const moving = (queue: string) => `${queue}.moving`;

export const QUORUM = { 'x-queue-type': 'quorum' } as const;

/** What `queue` is on the broker now. A channel of its own: a refused declaration closes it. */
export async function kindOf(conn: Connection, queue: string): Promise<'quorum' | 'classic' | 'absent'> {
  const probe = await conn.createChannel();
  probe.on('error', () => {});
  try {
    await probe.checkQueue(queue);
  } catch {
    return 'absent';
  }
  const ch = await conn.createChannel();
  ch.on('error', () => {});
  try {
    // Declaring an existing queue as quorum succeeds only if it is one (406 PRECONDITION_FAILED otherwise).
    await ch.assertQueue(queue, { durable: true, arguments: QUORUM });
    await ch.close();
    return 'quorum';
  } catch {
    return 'classic';
  } finally {
    await probe.close().catch(() => {});
  }
}

export async function exists(conn: Connection, queue: string): Promise<boolean> {
  const ch = await conn.createChannel();
  ch.on('error', () => {});
  try {
    await ch.checkQueue(queue);
    await ch.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Make `queue` a quorum queue bound to `keys`. Classic (an existing mesh): a
 * quorum queue `queue.moving` is bound to the same keys first, then the
 * classic one unbound: from then on every message lands in a quorum queue, and
 * what the classic one holds is drained by its consumers as before (never
 * deleted holding anything). Bound before unbound, so no message is unroutable
 * meanwhile; one published in between lands in both and is handled twice,
 * which every consumer of these queues is safe to do.
 */
export async function moveToQuorum(
  conn: Connection,
  queue: string,
  keys: readonly string[],
): Promise<'quorum' | 'moving'> {
  const kind = await kindOf(conn, queue);
  const ch = await conn.createChannel();
  try {
    await ch.assertExchange(EXCHANGE, 'topic', { durable: true });
    if (kind === 'classic') {
      await ch.assertQueue(moving(queue), { durable: true, arguments: QUORUM });
      for (const k of keys) await ch.bindQueue(moving(queue), EXCHANGE, k);
      for (const k of keys) await ch.unbindQueue(queue, EXCHANGE, k);
      return 'moving';
    }
    await ch.assertQueue(queue, { durable: true, arguments: QUORUM });
    for (const k of keys) await ch.bindQueue(queue, EXCHANGE, k);
    if (await exists(conn, moving(queue))) {
      for (const k of keys) await ch.unbindQueue(moving(queue), EXCHANGE, k);
      return 'moving';
    }
    return 'quorum';
  } finally {
    await ch.close().catch(() => {});
  }
}

/**
 * One step of a move, taken by whoever consumes the queues (serve, every few
 * seconds until it answers 'quorum'): the classic queue, once empty and with
 * no consumer, is deleted and made again as quorum with the keys (the broker
 * refuses the delete if a message or a consumer arrived: if-empty, if-unused);
 * then `queue.moving` is unbound and, once drained, deleted the same way.
 * The caller stops consuming the classic queue and settles what it took from
 * it before asking, so no message it still holds is in a deleted queue.
 */
export async function finishMove(
  conn: Connection,
  queue: string,
  keys: readonly string[],
  opts: { whileConsumed?: boolean } = {},
): Promise<'quorum' | 'moving'> {
  const kind = await kindOf(conn, queue);
  // Quorum queues (3.10) refuse if-empty and if-unused (540, closing the connection): for
  // them the counts read just before stand in. The queue is unbound by then, so
  // nothing new arrives; only a message a consumer hands back could, and the
  // consumer (serve) settles what it took before asking.
  const del = async (q: string, quorum: boolean) => {
    const ch = await conn.createChannel();
    ch.on('error', () => {});
    try {
      const { messageCount, consumerCount } = await ch.checkQueue(q);
      if (messageCount > 0 || (consumerCount > 0 && !opts.whileConsumed)) return false;
      await ch.deleteQueue(q, quorum ? {} : { ifEmpty: true, ifUnused: !opts.whileConsumed });
      await ch.close();
      return true;
    } catch {
      return false;
    }
  };
  if (kind === 'classic' && !(await del(queue, false))) return 'moving';
  if (kind !== 'quorum') await moveToQuorum(conn, queue, keys);
  if (await exists(conn, moving(queue))) {
    const ch = await conn.createChannel();
    try {
      for (const k of keys) await ch.unbindQueue(moving(queue), EXCHANGE, k);
    } finally {
      await ch.close().catch(() => {});
    }
    if (!(await del(moving(queue), true))) return 'moving';
  }
  return 'quorum';
}

/**
 * Hand what `from` holds to the exchange under `key`, each message confirmed
 * before it is acked: for mesh.build.moving, which builders may not read. The
 * properties go as they came (the user id is the admin's own: `mesh build`
 * publishes as the admin serve also is).
 */
export async function shovel(conn: Connection, from: string, key: string): Promise<number> {
  const ch = await conn.createConfirmChannel();
  let moved = 0;
  try {
    for (;;) {
      const m = await ch.get(from);
      if (!m) return moved;
      const p = m.properties;
      await new Promise<void>((res, rej) =>
        ch.publish(
          EXCHANGE,
          key,
          m.content,
          {
            mandatory: true,
            persistent: true,
            contentType: p.contentType,
            type: p.type,
            messageId: p.messageId,
            correlationId: p.correlationId,
            replyTo: p.replyTo,
            userId: p.userId,
            headers: p.headers,
            timestamp: p.timestamp,
            expiration: p.expiration,
          },
          (err) => (err ? rej(err) : res()),
        ),
      );
      ch.ack(m);
      moved++;
    }
  } finally {
    await ch.close().catch(() => {});
  }
}

/** The exchange, and the shared queues as quorum queues (moving them where they are classic). */
export async function declareTopology(conn: Connection): Promise<{ moving: string[] }> {
  const still: string[] = [];
  for (const [queue, keys] of Object.entries(SHARED_QUEUES))
    if ((await moveToQuorum(conn, queue, keys)) === 'moving') still.push(queue);
  return { moving: still };
}

export type { Channel };
