// A node's account of what it holds (R1, R2). Kept as a backup copy, never a
// source. A refusal or a partial failure moves last_seen and touches nothing
// of the last report: neither is an account of what the machine holds, and
// recording one as if it were would tell a rebuilding node to remove what it
// still has. Each is kept apart as the node's last refusal or failure (a
// rollout halts on them), and each resource put back is counted (drift that
// repeats is news). A refusal is recorded as its kind (forged, malformed,
// replayed, stale: src/wire/report.ts), and one said again is counted in SQL.
import type { ConsumeMessage } from 'amqplib';
import { readReport, type Report } from '../../wire/report.js';
import type postgres from 'postgres';
import { sender, type ServeContext } from '../context.js';
import { settle } from '../../provision/settle.js';
import { answerRecover } from './recover.js';

// PostgreSQL text cannot hold NUL, and a host quotes what it refused (random
// bytes among them): what it says is kept with NUL shown as U+FFFD.
const storable = (s: string) => s.replace(/\u0000/g, '\uFFFD');

export async function report(ctx: ServeContext, msg: ConsumeMessage): Promise<void> {
  const from = sender(msg, ctx.prefix);
  if (from.kind !== 'node') {
    ctx.log(`report: dropped one from ${JSON.stringify(from.name)}, which is not a node account`);
    return;
  }
  let r;
  try {
    r = readReport(msg.content);
  } catch (err) {
    await ctx.stores.inventory`select inventory.mark_heard(${from.name})`;
    throw err;
  }
  // Once per message: "seen" commits with what the report records,
  // so a redelivery to this or another serve records nothing twice.
  const messageId = msg.properties.messageId ? String(msg.properties.messageId) : null;
  const refused = r.refused;
  const o = await ctx.stores.inventory.begin((tx) => recordReport(tx, from, r, messageId));
  if (!o.first)
    ctx.log(`report: ${from.name}'s report ${messageId} was recorded before (a redelivery); acknowledged again only`);
  if (o.resync && o.first) {
    ctx.log(
      `report: ${from.name}'s package change does not apply to the list the mesh holds; asking it for the whole list`,
    );
    await answerRecover(ctx, from.name).catch((err: Error) =>
      ctx.log(`report: ${from.name} was not asked for its whole package list yet (${err.message})`),
    );
  }
  // V1: a kind held from its old agent is declared once it runs one that applies it (never throws; coalesced).
  if (o.upgraded) void ctx.redeclare.now(`${from.name} runs mesh-host ${r.agent} now`);
  if (refused) {
    if (o.first)
      ctx.log(
        `report: ${from.name} refused a declaration${refused.serial ? ` (serial ${refused.serial})` : ''}: ${refused.fault}: ${refused.reason}${o.times > 1 ? ` (the same, ${o.times} times in a row: one row of inventory.refusal, once in the history)` : ''}`,
      );
    return;
  }
  if (r.failed.length) {
    if (o.first)
      ctx.log(
        `report: ${from.name} could not apply ${r.failed.map((f) => `${f.id} (${f.error})`).join('; ')} of declaration ${r.serial}`,
      );
    if (r.superseded.length)
      await ctx.stores.assignment`select assignment.acknowledge(${from.name}, 0, ${r.superseded}::bigint[])`;
    return;
  }
  await acknowledged(ctx, from, r, o.first);
}

/** What recording a report found: whether it was the first delivery, and what the caller tells or asks next. */
interface Recorded {
  first: boolean;
  /** How many times in a row the node has now said this refusal (inventory.record_refusal folds repeats). */
  times: number;
  /** The node now runs another agent version than it said before: the kinds it may be declared changed with it. */
  upgraded: boolean;
  /** The node's package change did not come out at the list it named: it is asked for its whole list. */
  resync: boolean;
}

/** Report R from node FROM recorded in TX, once per MESSAGEID: a refusal, a failure or an account of what it holds. */
async function recordReport(
  tx: postgres.TransactionSql<Record<string, never>>,
  from: { name: string },
  r: Report,
  messageId: string | null,
): Promise<Recorded> {
  const o: Recorded = { first: true, times: 0, upgraded: false, resync: false };
  const refused = r.refused;
  const serial = r.refused ? (r.refused.serial ?? null) : r.serial;
  if (messageId) {
    const [row] =
      await tx`select inventory.receive_report(node_name => ${from.name}::text, report_message_id => ${messageId}::text, report_serial => ${serial}::bigint) as first`;
    if (!row!.first) {
      await tx`select inventory.mark_heard(${from.name})`;
      return { ...o, first: false };
    }
  }
  // Every report, a refusal's and a failure's too: the version of an agent that refuses is the one most worth knowing.
  if (r.agent) {
    const [v] = await tx`select inventory.record_agent_version(${from.name}::text, ${r.agent}::text) as changed`;
    o.upgraded = v!.changed as boolean;
  }
  if (refused) {
    const [row] =
      await tx`select inventory.record_refusal(node_name => ${from.name}::text, refused_serial => ${refused.serial ?? null}::bigint,
        refusal_fault => ${refused.fault}::text, refusal_reason => ${storable(refused.reason)}::text) as times`;
    o.times = row!.times as number;
    return o;
  }
  if (r.packages) {
    const [p] =
      await tx`select inventory.record_packages(node_name => ${from.name}::text, change => ${tx.json(r.packages as never)}::jsonb) as outcome`;
    o.resync = p!.outcome === 'resync';
  }
  // Nothing for a report without corrections: the report path is the busiest write.
  if (r.corrected.length)
    await tx`select inventory.record_corrections(node_name => ${from.name}::text, resources => ${r.corrected.map(storable)}::text[])`;
  if (r.failed.length) {
    await tx`select inventory.record_failure(${from.name}, ${r.serial}, ${tx.json(r.failed.map((f) => ({ id: storable(f.id), error: storable(f.error) })) as never)})`;
    return o;
  }
  const holdsUntil = r.holdsUntil === undefined ? null : new Date(r.holdsUntil * 1000);
  await tx`select inventory.record_report(${from.name}, ${r.serial}, ${tx.json(r.held as never)}, '[]'::jsonb, ${holdsUntil})`;
  return o;
}

/** A report of what FROM holds, acknowledged: its outbox rows done, what it put back logged, rotations settled. */
async function acknowledged(ctx: ServeContext, from: { name: string }, r: Report, first: boolean): Promise<void> {
  if (r.stale && first)
    ctx.log(
      `report: ${from.name} is stale: declaration ${r.serial} it holds expired${r.holdsUntil ? ` at ${new Date(r.holdsUntil * 1000).toISOString()}` : ''}; it keeps applying it, but its feed may be frozen (see mesh node list)`,
    );
  // Idempotent: a redelivery after a crash between the two records again.
  await ctx.stores.assignment`select assignment.acknowledge(${from.name}, ${r.serial}, ${r.superseded}::bigint[])`;
  if (r.corrected.length) ctx.log(`report: ${from.name} put back ${r.corrected.join(', ')}`);
  // The acknowledgement that completes a rotation retires the old credential (S5).
  // The report is recorded and the provider's composition already changed: a
  // failure here is tried again by serve until the provider is declared (W2).
  try {
    for (const s of await settle(ctx.stores, ctx.signer, from.name)) {
      ctx.log(
        `report: ${s.secret} settled at generation ${s.generation} with ${from.name}'s acknowledgement; re-declaring ${s.redeclared.map((d) => `${d.node} ${d.serial}`).join(', ') || 'nothing (already current)'}`,
      );
    }
  } catch (err) {
    ctx.log(
      `report: a rotation ${from.name} holds may have settled, but its provider was not declared again (${(err as Error).message})`,
    );
    await ctx.redeclare.now(`a rotation ${from.name} settled`);
  }
}
