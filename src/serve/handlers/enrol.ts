// Enrolment: spend the token and record the keys in one SQL call (E1, E2),
// then set the node's account to the broker password it chose and answer. Every refusal is
// one message to the node; the operator's log says which reason (E3).
import { createHash } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import { readEnrolRequest, REFUSAL, type EnrolWelcome } from '../../wire/enrol.js';
import { WireError } from '../../wire/envelope.js';
import { queueOf } from '../../wire/names.js';
import { b64 } from '../../crypto/keys.js';
import { sender, type ServeContext } from '../context.js';

export async function enrol(ctx: ServeContext, msg: ConsumeMessage): Promise<void> {
  const from = sender(msg, ctx.prefix);
  const answer = (body: unknown) =>
    ctx.answer(queueOf(from.name), Buffer.from(JSON.stringify(body)), {
      correlationId: msg.properties.correlationId,
      type: 'enrol-reply',
    });
  if (from.kind !== 'node') {
    ctx.log(`enrol: dropped a request from ${JSON.stringify(from.name)}, which is not a node account`);
    return;
  }
  let req;
  try {
    req = readEnrolRequest(msg.content);
  } catch (err) {
    if (!(err instanceof WireError)) throw err;
    ctx.log(`enrol: refused ${from.name}: ${err.fault} request: ${err.message}`);
    await ctx.stores.inventory`select inventory.mark_heard(${from.name})`;
    return answer(REFUSAL);
  }
  if (req.name !== from.name) {
    ctx.log(`enrol: refused ${from.name}: it asked to enrol as ${req.name}`);
    return answer(REFUSAL);
  }
  const hash = createHash('sha256').update(req.secret).digest();
  const [row] = await ctx.stores.inventory<{ outcome: string }[]>`
    select inventory.spend_token(token_hash => ${hash}::bytea, node_name => ${req.name}::text,
      identity_key => ${Buffer.from(req.identity)}::bytea, overlay_key => ${Buffer.from(req.overlay)}::bytea,
      sealing_key => ${Buffer.from(req.sealing)}::bytea) as outcome`;
  const outcome = row!.outcome;
  if (outcome !== 'enrolled' && outcome !== 'again') {
    ctx.log(`enrol: refused ${req.name}: ${outcome}`);
    return answer(REFUSAL);
  }
  // The token's secret was the first password; the one the node keeps for
  // years is the one it chose and sent, so the pasted secret stays one-time.
  // Safe twice: a serve killed after answering but before its ack has the
  // request redelivered (to itself or another serve), which answers 'again'
  // and sets the same password, since the request carries it; and a node that
  // lost its connection before reading the welcome already holds it.
  await ctx.accounts.setPassword(req.name, req.password);
  const welcome: EnrolWelcome = {
    ok: true,
    mesh: ctx.signer.mesh,
    node: req.name,
    signingKey: b64(ctx.signer.public),
  };
  await answer(welcome);
  ctx.log(`enrol: ${req.name} ${outcome === 'again' ? 'asked again and was answered again' : 'enrolled'}`);
  // The new node and every node whose peers (or anything else) changed with it are owed a declaration (W2);
  // a machine back with new keys holds no current copy of its made secrets: they are made again for every
  // holder first, both ends in the same push (S3), and an accepted one cannot be: the log names the remedy.
  // Asked again changes nothing: what the first enrolment changed was declared then, or is owed (P2).
  if (outcome === 'enrolled') await ctx.redeclare.now(`${req.name}'s enrolment`, [req.name]);
}
