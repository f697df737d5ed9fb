// A builder enrolling: it replaces the password `mesh builder add` printed with
// one it chose, as a node does at enrolment (B3). The printed line, which sat in
// a terminal and perhaps a file, stops working once the builder holds its own.
// Only builder accounts are heard (RabbitMQ checks user_id against the
// connection's account), and each sets only its own password.
import type { ConsumeMessage } from 'amqplib';
import { readBuilderEnrol } from '../../wire/builder_line.js';
import { WireError } from '../../wire/envelope.js';
import { sender, type ServeContext } from '../context.js';

export async function builderEnrol(ctx: ServeContext, msg: ConsumeMessage): Promise<void> {
  const from = sender(msg, ctx.prefix);
  if (from.kind !== 'builder') {
    ctx.log(`builder.enrol: dropped one from ${JSON.stringify(from.name)}, which is not a builder account`);
    return;
  }
  let password: string;
  try {
    password = readBuilderEnrol(msg.content);
  } catch (err) {
    if (!(err instanceof WireError)) throw err;
    ctx.log(`builder.enrol: refused builder ${from.name}: ${err.message}`);
    return;
  }
  await ctx.accounts.setBuilderPassword(from.name, password);
  ctx.log(`builder.enrol: builder ${from.name} replaced the password its line carried with one it chose`);
}
