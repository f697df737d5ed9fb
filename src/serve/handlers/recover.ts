// R2: a rebuilt host, which lost its record of what it applied, is handed both
// its newest declaration and the mesh's signed copy of its last report
// (src/wire/last_report.ts). D2: the copy carries the floor, the newest
// declaration the node acknowledged (assignment.acknowledged_floor), so a host
// that lost its kept declaration still refuses the older ones.
import { createHash } from 'node:crypto';
import type { ConsumeMessage } from 'amqplib';
import { writeLastReport } from '../../wire/last_report.js';
import { queueOf } from '../../wire/names.js';
import { sender, type ServeContext } from '../context.js';
import { toNode } from '../../broker/publish.js';

// One deferred answer per node per serve: asks inside the interval are refused (MSHS3)
// but not lost. A node's queue is not persistent, so the answer given before may be
// gone (a broker restart, a host restarted before reading it): the node gets it again
// at the interval's end, whatever it asked in between, and no more often.
const deferred = new WeakMap<ServeContext, Map<string, NodeJS.Timeout>>();

export async function recover(ctx: ServeContext, msg: ConsumeMessage): Promise<void> {
  const from = sender(msg, ctx.prefix);
  if (from.kind !== 'node') return;
  await answerRecover(ctx, from.name);
}

/**
 * The answer to recover, given unasked too: when a node's package change did
 * not apply to the list the mesh holds, this answer names the digest held, and
 * the node sends its whole list.
 */
export async function answerRecover(ctx: ServeContext, node: string): Promise<void> {
  try {
    await answer(ctx, node, '');
  } catch (err) {
    if ((err as { code?: string }).code === 'MSHS3') await deferAnswer(ctx, node);
    throw err;
  }
}

async function deferAnswer(ctx: ServeContext, node: string): Promise<void> {
  let pending = deferred.get(ctx);
  if (!pending) deferred.set(ctx, (pending = new Map()));
  if (pending.has(node)) return;
  const [s] = await ctx.stores
    .inventory`select extract(epoch from answer_every)::float8 as every from inventory.bounds_setting`;
  const timer = setTimeout(
    () => {
      pending.delete(node);
      answer(ctx, node, "at the interval's end, ").catch((err: Error & { code?: string }) =>
        ctx.log(`recover: the answer deferred for ${node} was not given (${err.message})`, { node, code: err.code }),
      );
    },
    Math.ceil((Number(s?.every ?? 15) + 1) * 1000),
  );
  timer.unref();
  pending.set(node, timer);
}

async function answer(ctx: ServeContext, node: string, when: string): Promise<void> {
  const from = { name: node };
  const [rep] = await ctx.stores.inventory`select held, reported_at from inventory.report where node = ${from.name}`;
  const [decl] = await ctx.stores.assignment`select assignment.latest_envelope(${from.name}) as envelope`;
  const [floor] = await ctx.stores.assignment`select serial, digest from assignment.acknowledged_floor(${from.name})`;
  const [pkgs] = await ctx.stores.inventory`select digest from inventory.package_state where node = ${from.name}`;
  const packages = (pkgs?.digest as string | undefined) ?? null;
  // P2: the same answer once per node per interval (MSHS3): each signs and publishes up to a declaration's size.
  const answer = createHash('sha256')
    .update(
      JSON.stringify([
        decl?.envelope
          ? createHash('sha256')
              .update(decl.envelope as Buffer)
              .digest('hex')
          : null,
      ]),
    )
    .update(
      JSON.stringify([rep?.reported_at ?? null, floor ? String(floor.serial) : null, floor?.digest ?? null, packages]),
    )
    .digest('base64');
  await ctx.stores.inventory`select inventory.check_answer(${from.name}, 'recover', ${answer})`;
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
  if (decl?.envelope) await toNode(ctx.channel, queueOf(from.name), decl.envelope as Buffer, { type: 'declaration' });
  await toNode(ctx.channel, queueOf(from.name), last, { type: 'last-report' });
  // Marked once given: an answer lost before it went out is given on redelivery.
  await ctx.stores.inventory`select inventory.mark_answered(${from.name}, 'recover', ${answer})`;
  ctx.log(
    `recover: ${when}handed ${from.name} its ${decl?.envelope ? 'newest declaration and ' : ''}last report (${rep ? `${(rep.held as unknown[]).length} held` : 'never reported'}; floor ${floor ? `serial ${floor.serial}` : 'none'})`,
  );
}
