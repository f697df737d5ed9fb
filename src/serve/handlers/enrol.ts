// Enrolment: spend the token and record the keys in one SQL call (E1, E2),
// then issue the node its own broker password and answer. Every refusal is
// one message to the node; the operator's log says which reason (E3).
import { createHash, hkdfSync } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import { readEnrolRequest, REFUSAL, type EnrolWelcome } from '../../wire/enrol.js';
import { WireError } from '../../wire/envelope.js';
import { queueOf } from '../../wire/names.js';
import { seal } from '../../crypto/seal.js';
import { b64 } from '../../crypto/keys.js';
import { sender, type ServeContext } from '../context.js';
import { publish } from '../../broker/publish.js';
import { remake } from '../../secret/remake.js';

export async function enrol(ctx: ServeContext, msg: ConsumeMessage): Promise<void> {
  const from = sender(msg, ctx.prefix);
  const answer = (body: unknown) =>
    publish(ctx.channel, '', queueOf(from.name), Buffer.from(JSON.stringify(body)), { correlationId: msg.properties.correlationId, type: 'enrol-reply' });
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
  // years is issued here, so the pasted secret stays one-time.
  const password = brokerPassword(ctx.signer.secret, hash, req.identity);
  await ctx.accounts.setPassword(req.name, password);
  const welcome: EnrolWelcome = {
    ok: true,
    mesh: ctx.signer.mesh,
    node: req.name,
    signingKey: b64(ctx.signer.public),
    password: seal(Buffer.from(password), req.sealing),
  };
  await answer(welcome);
  ctx.log(`enrol: ${req.name} ${outcome === 'again' ? 'asked again and was answered again' : 'enrolled'}`);
  // A machine back with new keys holds no current copy of its made secrets:
  // they are made again for every holder now, both ends in one push (S3); an
  // accepted one cannot be, and the log names the remedy.
  if (outcome === 'enrolled') {
    try {
      const r = await remake({ holder: req.name, signer: ctx.signer });
      for (const m of r.made) ctx.log(`enrol: made ${m.secret} again (generation ${m.generation}) for ${m.holders.join(', ')}`);
      for (const f of r.refused) ctx.log(`enrol: ${req.name} holds no current copy of ${f.secret}: ${f.reason}`);
    } catch (err) {
      ctx.log(`enrol: the secrets ${req.name} held were not made again (${(err as Error).message}); mesh secret remake makes them`);
    }
  }
  // The new node and every node whose peers (or anything else) changed with it are owed a declaration (W2).
  await ctx.redeclare.now(`${req.name}'s enrolment`);
}

/**
 * The node's broker password, derived (HKDF-SHA256) from the mesh's signing
 * key, the spent token and the identity that spent it: the same for every
 * answer to one enrolment. Safe twice: a serve killed after answering but
 * before its ack has the request redelivered (to itself or another serve),
 * which answers 'again'; a random password there would replace the one the
 * host already kept, and lock it out of the broker for good. Unique per
 * enrolment (a token is spent once), and nothing about the key can be learnt
 * from it.
 */
export function brokerPassword(signingSecret: Uint8Array, tokenHash: Uint8Array, identity: Uint8Array): string {
  const salt = Buffer.concat([Buffer.from(tokenHash), Buffer.from(identity)]);
  return Buffer.from(hkdfSync('sha256', signingSecret, salt, 'mesh broker password v1', 24)).toString('base64url');
}
