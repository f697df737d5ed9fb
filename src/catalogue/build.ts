// `mesh build MODULE`: a build is work, not state (B1). The request is
// recorded in SQL first (an answer must always find its request), then put on
// the one shared build queue with its id as correlation id, then the
// requester waits for the answer `mesh serve` records, printing what the
// builder says meanwhile. Waiting is SQL polling, not a reply queue: the
// answer is recorded whether or not anyone is still waiting for it.
import { randomUUID } from 'node:crypto';
import type { ConfirmChannel } from 'amqplib';
import type { Sql } from '../store/connect.js';
import { withStore } from '../store/with_store.js';
import { publish, Unroutable } from '../broker/publish.js';
import { EXCHANGE, BUILD_REQUEST, BUILD_QUEUE, declareTopology } from '../broker/topology.js';
import { readBroker } from '../home/home.js';
import { adminTurns } from '../broker/admin.js';
import { nodeName } from '../wire/names.js';
import { REF, writeMessage, type BuildRequest } from '../wire/build.js';
import { refuse } from '../sys/errors.js';

export interface BuildOptions {
  ref?: string;
  timeoutMs: number;
  /** Each line a builder said, as it arrives. */
  progress?: (line: string, builder: string) => void;
  pollMs?: number;
  env?: NodeJS.ProcessEnv;
}

export interface BuildAnswer {
  id: string;
  module: string;
  ref: string;
  ok: boolean;
  builder: string;
  commit: string | null;
  image: string | null;
  digest: string | null;
  version: number | null;
  error: string | null;
  log: string | null;
}

export class BuildTimeout extends Error {
  exitCode = 5;
}

export function parseTimeout(s: string): number {
  const m = /^(\d+)(s|m|h)$/.exec(s);
  if (!m || Number(m[1]) === 0) throw refuse('MSH35', `--timeout ${JSON.stringify(s)} is not a duration`);
  return Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 's'];
}

const said = (ms: number) => (ms % 60_000 === 0 ? `${ms / 60_000}m` : `${Math.round(ms / 1000)}s`);

async function send(ch: ConfirmChannel, req: BuildRequest, requester: string): Promise<void> {
  try {
    await publish(ch, EXCHANGE, BUILD_REQUEST, writeMessage(req), {
      mandatory: true,
      correlationId: req.id,
      userId: requester,
      contentType: 'application/json',
      type: BUILD_REQUEST,
    });
  } catch (err) {
    if (err instanceof Unroutable)
      throw new Error(`the broker had no queue for ${BUILD_REQUEST}: run mesh serve once to declare the topology`, {
        cause: err,
      });
    throw err;
  }
}

export async function build(module: string, opts: BuildOptions): Promise<BuildAnswer> {
  nodeName(module, 'module name');
  if (opts.ref !== undefined && !REF.test(opts.ref))
    throw refuse('MSH34', `--ref ${JSON.stringify(opts.ref)} is not a branch, tag or commit`);
  const broker = readBroker(opts.env);
  const id = randomUUID();
  return withStore(
    'catalogue',
    async (sql) => {
      const [row] = await sql<{ git_url: string; path: string; ref: string; track: string }[]>`
      select * from catalogue.request_build(request_id => ${id}::uuid, module_name => ${module}::text, build_ref => ${opts.ref ?? null}::text)`;
      const req: BuildRequest = {
        v: 1,
        id,
        module,
        git: row!.git_url,
        path: row!.path,
        ref: row!.ref,
        track: row!.track,
      };
      try {
        const conn = (await adminTurns(broker).connect(`mesh build ${module}`)).conn;
        try {
          const ch = await conn.createConfirmChannel();
          await declareTopology(conn);
          await send(ch, req, broker.user);
        } finally {
          await conn.close().catch(() => {});
        }
      } catch (err) {
        // Recorded but never queued: nobody would ever answer it.
        await sql`select catalogue.withdraw_build_request(request_id => ${id}::uuid)`.catch(() => {});
        throw err;
      }
      return waitForAnswer(sql, req, opts);
    },
    { env: opts.env },
  );
}

async function waitForAnswer(sql: Sql, req: BuildRequest, opts: BuildOptions): Promise<BuildAnswer> {
  const end = Date.now() + opts.timeoutMs;
  let seq = 0n;
  for (;;) {
    const lines = await sql<{ seq: bigint; builder: string; line: string }[]>`
      select seq, builder, line from catalogue.build_progress where request_id = ${req.id}::uuid and seq > ${seq.toString()}::bigint order by seq`;
    for (const l of lines) {
      opts.progress?.(l.line, l.builder);
      seq = l.seq;
    }
    const [s] = await sql`
      select b.*, (select m.version from catalogue.module m where m.name = b.module) as version
        from catalogue.build_status b where b.id = ${req.id}::uuid`;
    if (s && s.ok !== null) {
      return {
        id: req.id,
        module: req.module,
        ref: req.ref,
        ok: s.ok as boolean,
        builder: s.builder as string,
        commit: s.commit_sha as string | null,
        image: s.image as string | null,
        digest: s.digest as string | null,
        version: s.ok ? (s.version as number) : null,
        error: s.error as string | null,
        log: s.log_tail as string | null,
      };
    }
    if (Date.now() > end) {
      throw new BuildTimeout(
        `no answer to build request ${req.id} (${req.module} at ${req.ref}) within ${said(opts.timeoutMs)}` +
          `${s?.state === 'building' ? ', though a builder started it' : ''}: is a mesh-builder running and consuming ${BUILD_QUEUE}? ` +
          'The request stays queued; its answer is recorded whenever a builder gives it (mesh module list shows the build)',
      );
    }
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 300));
  }
}
