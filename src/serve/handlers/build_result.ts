// What builders say about a request (B1): progress lines while building, then
// the one answer. Only builder accounts are heard (RabbitMQ checks user_id
// against the connection's account, so a node cannot pass for a builder).
// The answer is recorded once: a request redelivered after a builder died,
// or built twice, brings a second answer, which SQL keeps out. A success
// naming an image repository other than the module's is refused there and
// recorded as a failed build (B3): a builder does not choose what nodes run.
import type { ConsumeMessage } from 'amqplib';
import { readBuildNews } from '../../wire/build.js';
import { sender, type ServeContext } from '../context.js';
import { refuse } from '../../sys/errors.js';

export async function buildResult(ctx: ServeContext, msg: ConsumeMessage): Promise<void> {
  const from = sender(msg, ctx.prefix);
  if (from.kind !== 'builder') {
    ctx.log(
      `build.result: dropped one from ${JSON.stringify(String(msg.properties.userId ?? ''))}, which is not a builder account`,
    );
    return;
  }
  const news = readBuildNews(msg.content);
  const sql = ctx.stores.catalogue;
  if (news.kind === 'progress') {
    const [row] =
      await sql`select catalogue.record_build_progress(request_id => ${news.id}::uuid, builder_name => ${from.name}::text, progress_line => ${news.line}::text) as known`;
    if (!row!.known)
      ctx.log(`build.result: builder ${from.name} spoke of request ${news.id}, which this mesh never made; dropped`);
    return;
  }
  const [row] = await sql<{ outcome: string }[]>`
    select catalogue.record_build_result(
      request_id => ${news.id}::uuid, builder_name => ${from.name}::text, build_ok => ${news.ok}::boolean,
      commit_sha => ${news.commit ?? null}::text, source_head => ${news.head ?? null}::text,
      head_seen_at => ${news.headSeenAt ?? null}::timestamptz, image => ${news.image ?? null}::text,
      digest => ${news.digest ?? null}::text, error => ${news.error ?? null}::text, log_tail => ${news.log ?? null}::text) as outcome`;
  const outcome = row!.outcome;
  if (outcome === 'unknown')
    ctx.log(`build.result: builder ${from.name} answered request ${news.id}, which this mesh never made; dropped`);
  else if (outcome === 'duplicate')
    ctx.log(`build.result: request ${news.id} was already answered; ${from.name}'s answer not recorded`);
  else if (outcome === 'refused')
    ctx.log(
      `build.result: ${
        refuse(
          'MSHU6',
          `request ${news.id} built by ${from.name} names image repository ${news.image}, not the one assigned to its module; recorded as a failed build`,
        ).message
      }`,
    );
  else
    ctx.log(
      `build.result: request ${news.id} ${news.ok ? `built by ${from.name}: ${news.image}@${news.digest}` : `failed on ${from.name}: ${news.error}`}`,
    );
}
