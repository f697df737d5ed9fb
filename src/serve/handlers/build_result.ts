// A builder's answer to a build request (B1). Filled in by the build work.
import type { ConsumeMessage } from 'amqplib';
import type { ServeContext } from '../context.js';

export async function buildResult(ctx: ServeContext, _msg: ConsumeMessage): Promise<void> {
  ctx.log('build.result: not handled yet; dropped');
}
