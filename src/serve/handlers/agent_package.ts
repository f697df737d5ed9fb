// V2: a node asks for chunks of an agent package; serve reads them from the
// catalogue and publishes each on the node's own queue. Only a package some
// node is declared to run is handed out, and only to a node: the bytes are
// the catalogue's, and the host trusts nothing of them until their sha256
// matches its signed declaration. P2: each chunk is handed to a node at most
// once per interval (inventory.take_chunks); an ask for none new is refused
// (MSHZ9) before a byte is read, so a node asking in a loop makes serve read
// and publish at most the package once per interval.
import type { ConsumeMessage } from 'amqplib';
import { readPackageAsk } from '../../wire/agent_package.js';
import { WireError } from '../../wire/envelope.js';
import { queueOf } from '../../wire/names.js';
import { sender, type ServeContext } from '../context.js';
import { storeError } from '../../sys/errors.js';

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
  const [pkg] = await ctx.stores.catalogue`select chunks from catalogue.agent_package where sha256 = ${ask.sha256}`;
  const last = Math.min(ask.from + ask.count, Number(pkg?.chunks ?? 0)) - 1;
  if (last < ask.from) {
    ctx.log(
      `agent package: ${from.name} asked for chunks from ${ask.from} of ${ask.sha256.slice(0, 12)}, which has ${pkg?.chunks ?? 0}`,
      { node: from.name },
    );
    return;
  }
  // P2: each chunk once per node per interval (MSHZ9), before a byte is read.
  let taken: number[];
  try {
    const [t] = await ctx.stores
      .inventory`select inventory.take_chunks(${from.name}, ${ask.sha256}, ${ask.from}, ${last}) as n`;
    taken = t!.n as number[];
  } catch (err) {
    if ((err as { code?: string }).code !== 'MSHZ9') throw err;
    ctx.log(`agent package: refused ${from.name}: ${storeError(err).message}`, { node: from.name, code: 'MSHZ9' });
    return;
  }
  const rows = await ctx.stores.catalogue`select c.n, c.bytes, p.chunks from catalogue.agent_chunk c
                                           join catalogue.agent_package p on p.sha256 = c.sha256
                                          where c.sha256 = ${ask.sha256} and c.n = any(${taken}::int[])
                                          order by c.n`;
  for (const r of rows)
    await ctx.answer(queueOf(from.name), r.bytes as Buffer, {
      type: 'agent-chunk',
      headers: { sha256: ask.sha256, n: Number(r.n), of: Number(r.chunks) },
    });
}
