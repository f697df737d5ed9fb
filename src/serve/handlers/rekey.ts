// O3: a node tells the mesh its overlay key changed (a tunnel taken over),
// signed by its identity key. Verified against the identity key the mesh
// recorded at enrolment, recorded by a compare-and-swap in SQL
// (inventory.set_overlay_key), answered on the asker's direct reply-to, and
// then every node that peers with it is declared again: a peer holding the
// old key would drop every packet from the new one.
import type { ConsumeMessage } from 'amqplib';
import { readRekey, type RekeyReply } from '../../wire/rekey.js';
import { WireError } from '../../wire/envelope.js';
import { sender, type ServeContext } from '../context.js';
import { codeEntry } from '../../sys/errors.js';

/** What a rekey is answered: the key left and the key taken. */
const answerOf = (r: { left: Uint8Array; taken: Uint8Array }) =>
  `${Buffer.from(r.left).toString('base64')} ${Buffer.from(r.taken).toString('base64')}`;

export async function rekey(ctx: ServeContext, msg: ConsumeMessage): Promise<void> {
  const from = sender(msg, ctx.prefix);
  const replyTo = String(msg.properties.replyTo ?? '');
  // Only ever a direct reply-to: a node naming another node's queue gets nothing published there.
  const answer = async (r: RekeyReply) => {
    if (!replyTo.startsWith('amq.rabbitmq.reply-to.')) return;
    await ctx.answer(replyTo, Buffer.from(JSON.stringify(r)), {
      correlationId: msg.properties.correlationId,
      type: 'rekey-reply',
    });
  };
  if (from.kind !== 'node') {
    ctx.log(`rekey: dropped one from ${JSON.stringify(from.name)}, which is not a node account`);
    return;
  }
  let parsed;
  try {
    parsed = readRekey(msg.content);
    if (parsed.rekey.node !== from.name)
      throw new WireError('forged', `rekey from ${from.name} speaks for ${parsed.rekey.node}`, 'MSHN4');
    const [row] = await ctx.stores.inventory`select inventory.identity_of(${from.name}) as key`;
    const identity = row?.key as Buffer | null | undefined;
    if (!identity) throw new WireError('forged', `rekey from ${from.name}, which the mesh holds no identity for`);
    if (!parsed.verify(identity))
      throw new WireError('forged', `rekey from ${from.name} is not signed by its identity key`);
  } catch (err) {
    if (!(err instanceof WireError)) throw err;
    ctx.log(`rekey: refused ${from.name}: ${err.fault}: ${err.message}`);
    await ctx.stores.inventory`select inventory.mark_heard(${from.name})`;
    await answer({ ok: false, reason: `the mesh refused the rekey (${err.fault}): ${err.message}` });
    return;
  }
  const r = parsed.rekey;
  let outcome: 'rekeyed' | 'again';
  try {
    // P2: the same rekey answered once per node per interval (MSHS3): a new key re-declares every peer.
    await ctx.stores.inventory`select inventory.check_answer(${r.node}, 'rekey', ${answerOf(r)})`;
    const [row] = await ctx.stores.inventory`select inventory.set_overlay_key(node_name => ${r.node}::text,
      left_key => ${Buffer.from(r.left)}::bytea, taken_key => ${Buffer.from(r.taken)}::bytea) as outcome`;
    outcome = row!.outcome as 'rekeyed' | 'again';
  } catch (err) {
    const e = err as { code?: string; message: string; hint?: string };
    if (!codeEntry(e.code ?? '')) throw err;
    ctx.log(`rekey: refused ${r.node} (tunnel ${r.tunnel}): ${e.message}`);
    await answer({ ok: false, reason: `${e.message}${e.hint ? `: ${e.hint}` : ''}` });
    return;
  }
  ctx.log(
    `rekey: ${r.node} took over tunnel ${r.tunnel}; its overlay key is now ${Buffer.from(r.taken).toString('base64')}${outcome === 'again' ? ' (told again)' : ''}`,
  );
  await answer({ ok: true, outcome });
  await ctx.stores.inventory`select inventory.mark_answered(${r.node}, 'rekey', ${answerOf(r)})`;
  // Told again changes nothing: the peers were declared the new key when it was first told (W2 keeps that owed).
  if (outcome === 'again') return;
  // The peers learn the new key: every node whose composition changed (W2).
  await ctx.redeclare.now(`${r.node}'s new overlay key`);
}
