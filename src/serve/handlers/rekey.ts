// A node tells the mesh its overlay key changed (a tunnel taken over, O3),
// signed by its identity key. Filled in by the overlay work.
import type { ConsumeMessage } from 'amqplib';
import type { ServeContext } from '../context.js';

export async function rekey(ctx: ServeContext, _msg: ConsumeMessage): Promise<void> {
  ctx.log('rekey: not handled yet; dropped');
}
