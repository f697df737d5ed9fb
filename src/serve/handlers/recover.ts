// R2: a rebuilt host, which lost its record of what it applied, is handed both
// its newest declaration and the mesh's signed copy of its last report
// (src/wire/last_report.ts). D2: the copy carries the floor, the newest
// declaration the node acknowledged (assignment.acknowledged_floor), so a host
// that lost its kept declaration still refuses the older ones. V3: the ask
// says the highest serial the node applied; a store behind it (restored from
// an older backup) continues the node's serials above that and declares the
// node again, so what it is handed is newer than anything it holds.
import { createHash } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import { writeLastReport } from '../../wire/last_report.js';
import { queueOf } from '../../wire/names.js';
import { sender, type ServeContext } from '../context.js';
import { readRecover } from '../../wire/recover.js';
import { declare } from '../../assignment/declare.js';

// One deferred answer per node per serve: asks inside the interval are refused (MSHS3)
// but not lost. A node's queue is not persistent, so the answer given before may be
// gone (a broker restart, a host restarted before reading it): the node gets it again
// at the interval's end, whatever it asked in between, and no more often.
const deferred = new WeakMap<ServeContext, Map<string, { timer: NodeJS.Timeout; applied: number | null }>>();

export async function recover(ctx: ServeContext, msg: ConsumeMessage): Promise<void> {
  const from = sender(msg, ctx.prefix);
  if (from.kind !== 'node') return;
  const { applied } = readRecover(msg.content);
  await answerRecover(ctx, from.name, applied);
}

/**
 * The answer to recover, given unasked too: when a node's package change did
 * not apply to the list the mesh holds, this answer names the digest held, and
 * the node sends its whole list. APPLIED: the serial the node says it applied.
 */
export async function answerRecover(ctx: ServeContext, node: string, applied: number | null = null): Promise<void> {
  try {
    await answer(ctx, node, '', applied);
  } catch (err) {
    if ((err as { code?: string }).code === 'MSHS3') await deferAnswer(ctx, node, applied);
    throw err;
  }
}

async function deferAnswer(ctx: ServeContext, node: string, applied: number | null): Promise<void> {
  let pending = deferred.get(ctx);
  if (!pending) deferred.set(ctx, (pending = new Map()));
  const waiting = pending.get(node);
  if (waiting) {
    if (applied !== null) waiting.applied = Math.max(waiting.applied ?? 0, applied);
    return;
  }
  const [s] = await ctx.stores
    .inventory`select extract(epoch from answer_every)::float8 as every from inventory.bounds_setting`;
  const entry = { applied } as { timer: NodeJS.Timeout; applied: number | null };
  entry.timer = setTimeout(
    () => {
      pending.delete(node);
      answer(ctx, node, "at the interval's end, ", entry.applied).catch((err: Error & { code?: string }) =>
        ctx.log(`recover: the answer deferred for ${node} was not given (${err.message})`, { node, code: err.code }),
      );
    },
    Math.ceil((Number(s?.every ?? 15) + 1) * 1000),
  );
  entry.timer.unref();
  pending.set(node, entry);
}

async function answer(ctx: ServeContext, node: string, when: string, applied: number | null): Promise<void> {
  const from = { name: node };
  const [rep] = await ctx.stores.inventory`select held, reported_at from inventory.report where node = ${from.name}`;
  let [decl] = await ctx.stores.assignment`select assignment.latest_envelope(${from.name}) as envelope`;
  const [floor] = await ctx.stores.assignment`select serial, digest from assignment.acknowledged_floor(${from.name})`;
  const [pkgs] = await ctx.stores.inventory`select digest from inventory.package_state where node = ${from.name}`;
  const packages = (pkgs?.digest as string | undefined) ?? null;
  // P2: the same answer once per node per interval (MSHS3): each signs and publishes up to a declaration's size.
  await ctx.stores
    .inventory`select inventory.check_answer(${from.name}, 'recover', ${digestOf(decl?.envelope, rep, floor, packages)})`;
  // V3: after the check, so a node raising its serial in a loop is declared again at most once an interval.
  if (applied !== null) {
    const [c] = await ctx.stores.assignment`select assignment.continue_serials(${from.name}, ${applied}) as behind`;
    if (c?.behind) {
      const [d] = await declare({ nodes: [from.name], sql: ctx.stores.assignment, signer: ctx.signer });
      ctx.log(
        `recover: ${from.name} applied serial ${applied}, above every serial this store issued it (a store restored or behind): its serials continue from there${d ? `, declared again at ${d.serial}` : ''}`,
        { node: from.name, serial: d?.serial },
      );
      [decl] = await ctx.stores.assignment`select assignment.latest_envelope(${from.name}) as envelope`;
    }
  }
  const answer = digestOf(decl?.envelope, rep, floor, packages);
  await ctx.stores.inventory`select inventory.mark_heard(${from.name})`;
  const last = writeLastReport(
    {
      mesh: ctx.signer.mesh,
      node: from.name,
      held: rep ? rep.held : null,
      reportedAt: rep?.reported_at ?? null,
      floor: floor ? { serial: Number(floor.serial), digest: floor.digest as string } : null,
      packages,
    },
    ctx.signer.secret,
  );
  // Declaration first: the host applies it, then removes what the old report lists beyond it.
  if (decl?.envelope) await ctx.answer(queueOf(from.name), decl.envelope as Buffer, { type: 'declaration' });
  await ctx.answer(queueOf(from.name), last, { type: 'last-report' });
  // Marked once given: an answer lost before it went out is given on redelivery.
  await ctx.stores.inventory`select inventory.mark_answered(${from.name}, 'recover', ${answer})`;
  ctx.log(
    `recover: ${when}handed ${from.name} its ${decl?.envelope ? 'newest declaration and ' : ''}last report (${rep ? `${(rep.held as unknown[]).length} held` : 'never reported'}; floor ${floor ? `serial ${floor.serial}` : 'none'})`,
  );
}

/** What a recover is answered, as a digest: the newest declaration, the report and the floor. */
function digestOf(
  envelope: unknown,
  rep: Record<string, unknown> | undefined,
  floor: Record<string, unknown> | undefined,
  packages: string | null,
): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        envelope
          ? createHash('sha256')
              .update(envelope as Buffer)
              .digest('hex')
          : null,
      ]),
    )
    .update(
      JSON.stringify([rep?.reported_at ?? null, floor ? String(floor.serial) : null, floor?.digest ?? null, packages]),
    )
    .digest('base64');
}
