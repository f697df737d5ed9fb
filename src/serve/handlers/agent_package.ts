// V2: a node asks for chunks of an agent package; serve reads them from the
// catalogue and publishes each on the node's own queue. Only a package some
// node is declared to run is handed out, and only to a node: the bytes are
// the catalogue's, and the host trusts nothing of them until their sha256
// matches its signed declaration.
import type { ConsumeMessage } from 'amqplib';
import { readPackageAsk } from '../../wire/agent_package.js';
import { WireError } from '../../wire/envelope.js';
import { queueOf } from '../../wire/names.js';
import { sender, type ServeContext } from '../context.js';
import { toNode } from '../../broker/publish.js';

export async function agentPackage(ctx: ServeContext, msg: ConsumeMessage): Promise<void> {
  const from = sender(msg, ctx.prefix);
  if (from.kind !== 'node') return;
  let ask;
  try {
    ask = readPackageAsk(msg.content);
  } catch (err) {
    if (!(err instanceof WireError)) throw err;
    ctx.log(`agent package: refused ${from.name}: ${err.message}`, { node: from.name, code: err.code });
    return;
  }
  const [declared] = await ctx.stores.assignment`select 1 from assignment.agent_targets() t
                                                  where t.node = ${from.name} and t.sha256 = ${ask.sha256}`;
  if (!declared) {
    ctx.log(`agent package: ${from.name} asked for ${ask.sha256.slice(0, 12)}, which it is not declared to run`, {
      node: from.name,
    });
    return;
  }
  const rows = await ctx.stores.catalogue`select c.n, c.bytes, p.chunks from catalogue.agent_chunk c
                                           join catalogue.agent_package p on p.sha256 = c.sha256
                                          where c.sha256 = ${ask.sha256} and c.n >= ${ask.from} and c.n < ${ask.from + ask.count}
                                          order by c.n`;
  for (const r of rows)
    await toNode(ctx.channel, queueOf(from.name), r.bytes as Buffer, {
      type: 'agent-chunk',
      headers: { sha256: ask.sha256, n: Number(r.n), of: Number(r.chunks) },
    });
}
