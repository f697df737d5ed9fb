// A node's account of what it holds (R1, R2). Kept as a backup copy, never a
// source. A refusal or a partial failure moves last_seen and touches nothing
// of the last report: neither is an account of what the machine holds, and
// recording one as if it were would tell a rebuilding node to remove what it
// still has. Each is kept apart as the node's last refusal or failure (a
// rollout halts on them), and each resource put back is counted (drift that
// repeats is news). A refusal is recorded as its kind (forged, malformed,
// replayed, stale: src/wire/report.ts), and one said again is counted in SQL.
// Reports arriving together are recorded together (src/inventory/reports.ts),
// each succeeding or failing alone.
import type { ConsumeMessage } from 'amqplib';
import { readReport, type Report } from '../../wire/report.js';
import { reportEntry } from '../../inventory/reports.js';
import { sender, type ServeContext } from '../context.js';
import { answerRecover } from './recover.js';

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
  const o = await ctx.recordReport(reportEntry(from.name, r, messageId));
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
    if (r.superseded.length) await ctx.acknowledge({ node: from.name, serial: 0, superseded: r.superseded });
    return;
  }
  await acknowledged(ctx, from, r, o.first);
}

/** A report of what FROM holds, acknowledged: its outbox rows done, what it put back logged, rotations settled. */
async function acknowledged(ctx: ServeContext, from: { name: string }, r: Report, first: boolean): Promise<void> {
  if (r.stale && first)
    ctx.log(
      `report: ${from.name} is stale: declaration ${r.serial} it holds expired${r.holdsUntil ? ` at ${new Date(r.holdsUntil * 1000).toISOString()}` : ''}; it keeps applying it, but its feed may be frozen (see mesh node list)`,
    );
  // Idempotent: a redelivery after a crash between the two records again.
  await ctx.acknowledge({ node: from.name, serial: r.serial, superseded: r.superseded });
  if (r.corrected.length) ctx.log(`report: ${from.name} put back ${r.corrected.join(', ')}`);
  // The acknowledgement that completes a rotation retires the old credential (S5).
  // The report is recorded and the provider's composition already changed: a
  // failure here is tried again by serve until the provider is declared (W2).
  try {
    for (const s of await ctx.settle(from.name)) {
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
