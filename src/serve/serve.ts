// `mesh serve`: the control plane running. It consumes the control queue and
// hands each message to its handler; a message is acked only after the
// handler's transaction committed, so a crash anywhere means redelivery, never
// loss. Stateless: several serve processes may share the queue.
import type { ConfirmChannel, ConsumeMessage } from 'amqplib';
import { connect, type Sql } from '../store/connect.js';
import { connectBroker, type Connection, type Endpoint } from '../broker/connect.js';
import { Accounts } from '../broker/accounts.js';
import { declareTopology, CONTROL_QUEUE } from '../broker/topology.js';
import { Mover } from './move.js';
import { readBroker, readSigner, type BrokerConfig } from '../home/home.js';
import { adminTurns, management } from '../broker/admin.js';
import { codeEntry } from '../sys/errors.js';
import { WireError } from '../wire/envelope.js';
import { HANDLERS, type Handler } from './handlers.js';
import { HeardBatcher } from './handlers/heard.js';
import { reportRecorder } from '../inventory/reports.js';
import { acknowledger } from '../assignment/acknowledge.js';
import { settler } from '../provision/settle.js';
import { sender, SERVE_CONTEXTS, type ServeContext, type Stores } from './context.js';
import { log } from '../sys/log.js';
import { Drainer, DRAIN_BATCH } from './drain.js';
import { Redeclarer } from './redeclare.js';
import { Resigner } from './resign.js';
import { Roller } from './rollout.js';
import { Thawer } from './freeze.js';
import { ServeMetrics, type Outcome } from './metrics.js';
import { readiness, startEndpoint } from './endpoint.js';
import { parseMetricsListen, type Listen } from './metrics_listen.js';
import { Notifier } from '../sys/notify.js';
import { VERSION } from '../sys/version.js';
import { overLimit, PREFETCH, Tries, TRIES } from './intake.js';
import { answersOn, Held } from './answers.js';

export interface ServeOptions {
  env?: NodeJS.ProcessEnv;
  prefetch?: number;
  signal?: AbortSignal;
  /** Where /metrics, /healthz and /readyz answer; by default MESH_SERVE_METRICS, else loopback (metrics_listen.ts). */
  metrics?: Listen;
}

export async function openStores(env?: NodeJS.ProcessEnv, max = 4): Promise<Stores> {
  const entries = await Promise.all(SERVE_CONTEXTS.map(async (c) => [c, await connect(c, { env, max })] as const));
  return Object.fromEntries(entries) as unknown as Stores;
}

export async function closeStores(stores: Stores): Promise<void> {
  await Promise.all(Object.values(stores).map((s) => s.end({ timeout: 5 })));
}

// A handler failure that retrying cannot fix: bad input. Everything else
// (a database restarting, a broker hiccup) is handed back for redelivery.
function permanent(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  // A code of the register is a refusal by design (src/sys/errors.ts); the register test keeps every raised code in it.
  return err instanceof WireError || codeEntry(code) !== undefined || /^(22|23)/.test(code);
}

// One chain per sender: a node's messages are handled in the order it sent
// them (reports must not overtake each other), different nodes at once.
class Chains {
  private readonly chains = new Map<string, Promise<void>>();
  enqueue(key: string, job: () => Promise<void>): void {
    const next = (this.chains.get(key) ?? Promise.resolve()).then(job);
    this.chains.set(key, next);
    void next.then(() => {
      if (this.chains.get(key) === next) this.chains.delete(key);
    });
  }
  settled(): Promise<unknown> {
    return Promise.all(this.chains.values());
  }
}

/** One message: acked once its handler committed, acked and said when it can never be recorded, else handed back. */
async function handle(
  ctx: ServeContext,
  ch: ConfirmChannel,
  msg: ConsumeMessage,
  m: ServeMetrics,
  tries: Tries,
): Promise<void> {
  const kind = msg.fields.routingKey;
  const handler = (HANDLERS as Record<string, Handler | undefined>)[kind];
  // Only the kinds serve handles become label values: a stray routing key is one 'other', not a new series.
  const label = handler ? kind : 'other';
  let outcome: Outcome = 'ok';
  const timer = m.handlerSeconds.startTimer({ kind: label });
  try {
    if (!handler) {
      outcome = 'unhandled';
      ctx.log(`serve: no handler for ${kind}; dropped`);
    } else await handler(ctx, msg);
    tries.forget(msg);
    ch.ack(msg);
  } catch (err) {
    outcome = permanent(err) ? 'refused' : 'retried';
    if (permanent(err)) {
      ctx.log(`serve: ${kind} from ${msg.properties.userId ?? '?'} refused: ${(err as Error).message}`, {
        node: sender(msg, ctx.prefix).name,
        level: 'warn',
      });
      tries.forget(msg);
      ch.ack(msg);
    } else if (err instanceof Held) {
      // Not the message's fault: the broker holds serve's answers. Back to the queue, no try counted.
      outcome = 'retried';
      ctx.log(`serve: ${kind} from ${msg.properties.userId ?? '?'} handed back: ${(err as Error).message}`, {
        node: sender(msg, ctx.prefix).name,
      });
      await handBack(ch, msg);
    } else {
      const tried = tries.failed(msg);
      const from = sender(msg, ctx.prefix).name;
      const why = (err as Error).message;
      // P2: after a few tries it is set aside with why, not handed back for ever; a store that cannot keep it gets it back.
      if (tried >= TRIES) {
        const id = msg.properties.messageId ? String(msg.properties.messageId) : null;
        const kept = await ctx.stores
          .inventory`select inventory.set_aside(${from}, ${kind}, ${id}::text, ${why}, ${tried}, ${msg.content}) as n`.then(
          ([r]) => r!.n as string,
          () => undefined,
        );
        if (kept !== undefined) {
          outcome = 'set_aside';
          tries.forget(msg);
          ctx.log(
            `serve: ${kind} from ${msg.properties.userId ?? '?'} set aside after ${tried} tries (inventory.dead_letters id ${kept}): ${why}`,
            { node: from, level: 'warn' },
          );
          ch.ack(msg);
          return;
        }
      }
      ctx.log(
        `serve: ${kind} from ${msg.properties.userId ?? '?'} not recorded (try ${tried} of ${TRIES}), will retry: ${why}`,
        {
          node: from,
          level: 'warn',
        },
      );
      await handBack(ch, msg);
    }
  } finally {
    timer();
    m.handled.inc({ kind: label, outcome });
  }
}

/** A second later, the message back to the queue for another try. */
async function handBack(ch: ConfirmChannel, msg: ConsumeMessage): Promise<void> {
  await new Promise((r) => setTimeout(r, 1000));
  try {
    ch.nack(msg, false, true);
  } catch {
    /* channel gone: the broker redelivers */
  }
}

interface Running {
  broker: BrokerConfig;
  base: Omit<ServeContext, 'answer'>;
  heard: HeardBatcher;
  chains: Chains;
  tries: Tries;
  prefetch: number;
  /** The consuming channel of the connection now, on which the heard batcher settles. */
  channel?: ConfirmChannel;
  metrics: ServeMetrics;
  /** The control queue is being consumed now (readiness). */
  consuming: boolean;
  /** Consumed at least once: the next consume is a reconnect. */
  consumedBefore: boolean;
}

/** One connection: declare the topology, consume the control queue until either connection closes. */
async function consume(s: Running, conn: Connection, answers: Connection, at: Endpoint): Promise<void> {
  // Before the first await: an 'error' emitted with no listener is thrown out of serve.
  for (const c of [conn, answers]) c.on('error', () => {});
  const answer = await answersOn(answers, s.base.log);
  const ch = await conn.createConfirmChannel();
  s.channel = ch;
  const { moving } = await declareTopology(conn);
  // Each connect, in case the broker was made again: what a node's queue keeps (W3).
  await s.base.accounts
    .carryPolicy()
    .catch((err) =>
      s.base.log(
        `serve: the node queues' policy was not set (${(err as Error).message}); queues keep everything until the next connect sets it`,
      ),
    );
  // A single broker become a cluster: node queues move to quorum, in the background (hosts come back by themselves).
  void s.base.accounts.quorumNodeQueues().then(
    (moved) => {
      if (moved.length)
        s.base.log(
          `serve: ${moved.length} node queue(s) made again as quorum queues (a cluster): ${moved.slice(0, 5).join(', ')}${moved.length > 5 ? ', ...' : ''}`,
        );
    },
    (err) =>
      s.base.log(
        `serve: node queues not moved to quorum yet (${(err as Error).message}); tried again at the next connect`,
      ),
  );
  await ch.prefetch(s.prefetch);
  const ctx: ServeContext = { ...s.base, answer };
  const closed = new Promise<void>((resolve) => {
    for (const c of [conn, answers]) c.on('close', () => resolve());
  });
  // mesh.control, and while it moves to quorum the queue that holds its traffic meanwhile (src/serve/move.ts).
  const mover = new Mover(conn, ch, {
    consume: async (queue) =>
      (
        await ch.consume(queue, (msg) => {
          if (!msg) return;
          // P2: over its kind's limit, refused unread and settled now, ahead of its sender's chain.
          const large = overLimit(msg);
          if (large) {
            s.metrics.handled.inc({ kind: 'other', outcome: 'refused' });
            s.base.log(
              `serve: ${msg.fields.routingKey} from ${msg.properties.userId ?? '?'} refused: ${large.message}`,
              {
                node: sender(msg, s.base.prefix).name,
                level: 'warn',
              },
            );
            ch.ack(msg);
            return;
          }
          if (msg.fields.routingKey === 'heard') {
            s.metrics.heards.inc();
            s.heard.add(msg);
          } else s.chains.enqueue(String(msg.properties.userId ?? ''), () => handle(ctx, ch, msg, s.metrics, s.tries));
        })
      ).consumerTag,
    settled: async () => {
      await s.chains.settled();
      await s.heard.flush();
    },
    log: s.base.log,
  });
  await mover.start(moving);
  if (s.consumedBefore) s.metrics.brokerReconnects.inc();
  s.consumedBefore = true;
  s.consuming = true;
  log(`serve: consuming ${CONTROL_QUEUE} on ${at.host}:${at.port}`);
  await closed;
  s.consuming = false;
  mover.stop();
}

export async function serve(opts: ServeOptions = {}): Promise<void> {
  const broker = readBroker(opts.env);
  const signer = readSigner(opts.env);
  const stores = await openStores(opts.env);
  // V1: the skew rule judges every agent against the control plane running now.
  await stores.inventory`select inventory.state_control_version(${VERSION})`.catch(async (err) => {
    await closeStores(stores);
    throw err;
  });
  const prefix = broker.accountPrefix ?? '';
  const redeclare = new Redeclarer(stores.assignment, signer, log);
  const metrics = new ServeMetrics(stores);
  const prefetch = opts.prefetch ?? PREFETCH;
  const s: Running = {
    broker,
    metrics,
    consuming: false,
    consumedBefore: false,
    chains: new Chains(),
    tries: new Tries(),
    prefetch,
    base: {
      stores,
      accounts: new Accounts(management(broker)),
      signer,
      prefix,
      redeclare,
      recordReport: reportRecorder(stores.inventory, prefetch),
      acknowledge: acknowledger(stores.assignment, prefetch),
      settle: settler(stores, signer, prefetch),
      log,
    },
    // A batch of half what serve may hold: while one is written, the broker hands out the next
    // (a full batch left nothing in flight, and each waited out the write before it).
    heard: new HeardBatcher(stores.inventory, () => s.channel!, prefix, Math.max(1, prefetch >> 1)),
  };
  const { drainer, notifier } = drainerOf(stores.assignment, broker, metrics, opts.env);
  const listen = opts.metrics ?? parseMetricsListen(opts.env?.MESH_SERVE_METRICS ?? process.env.MESH_SERVE_METRICS);
  const endpoint = await startEndpoint(listen, metrics, () => readiness(stores, () => s.consuming)).catch(
    async (err) => {
      await closeStores(stores);
      throw err;
    },
  );
  log(`serve: metrics, health and readiness on http://${endpoint.address} (/metrics, /healthz, /readyz)`);
  await drainer.start();
  notifier.ready();
  // A command killed between its change and its declare left nodes behind their composition (W2): owed now,
  // while serve consumes (at 100,000 nodes never declared this is minutes, and enrolments and heards wait for none of it).
  void redeclare.now('since their last declaration');
  const resigner = new Resigner(stores.assignment, signer, log);
  resigner.start();
  const roller = new Roller(stores.assignment, signer, log);
  await roller.start();
  const thawer = new Thawer(stores.assignment, redeclare, log);
  thawer.start();
  await holdBroker(s, opts.signal);
  redeclare.stop();
  resigner.stop();
  await roller.stop();
  thawer.stop();
  await s.chains.settled();
  await s.heard.flush();
  await drainer.stop();
  await endpoint.stop();
  await closeStores(stores);
}

/** The outbox's drain loop, its sweep and batch from the settings, feeding the metrics and systemd's watchdog. */
function drainerOf(
  sql: Sql,
  broker: BrokerConfig,
  metrics: ServeMetrics,
  env: NodeJS.ProcessEnv | undefined,
): { drainer: Drainer; notifier: Notifier } {
  const sweep = Number(env?.MESH_SERVE_SWEEP_SECONDS ?? process.env.MESH_SERVE_SWEEP_SECONDS ?? 5);
  const batch = Number(env?.MESH_SERVE_DRAIN_BATCH ?? process.env.MESH_SERVE_DRAIN_BATCH ?? DRAIN_BATCH);
  const notifier = new Notifier(env ?? process.env, log);
  const drainer = new Drainer(sql, broker, {
    // The drain loop goes round every sweep, through the store, whatever comes in: it feeds systemd's watchdog.
    sweepMs: Math.min(sweep * 1000, notifier.everyMs ?? Infinity),
    turned: () => notifier.alive(),
    batch,
    log,
    drained: (r) => {
      metrics.drainPublished.inc(r.delivered);
      metrics.drainFailed.inc(r.taken - r.delivered);
      metrics.drainBatchSeconds.observe(r.seconds);
    },
  });
  return { drainer, notifier };
}

/** The control queue consumed on the brokers in turn, reconnecting with backoff, until SIGNAL aborts. */
async function holdBroker(s: Running, signal: AbortSignal | undefined): Promise<void> {
  let conn: Connection | undefined;
  let delay = 1000;
  let stopping = false;
  signal?.addEventListener('abort', () => {
    stopping = true;
    void conn?.close().catch(() => {});
  });
  // A broker cluster: every node of broker.json in turn, the next after the one lost.
  const turns = adminTurns(s.broker);
  while (!stopping) {
    try {
      const c = await turns.connect('mesh serve');
      conn = c.conn;
      // P2: serve's answers on a connection of their own, so a broker that holds publishers never holds its acks.
      const answers = await connectBroker(c.endpoint, { name: 'mesh serve answers' }).catch((err) => {
        void c.conn.close().catch(() => {});
        throw err;
      });
      // Either lost (or consume failing) ends both: the next turn opens the pair again. Not awaited: amqplib's
      // close waits for the broker's close-ok, which a broker going away never sends.
      await consume(s, conn, answers, c.endpoint).finally(() => {
        for (const x of [c.conn, answers]) void x.close().catch(() => {});
      });
      // It held: the next failure starts the waits from the bottom again.
      delay = 1000;
      turns.moveOn();
      if (!stopping) log(`serve: lost the broker at ${c.endpoint.host}:${c.endpoint.port}; reconnecting`);
    } catch (err) {
      if (stopping) break;
      log(`serve: cannot reach the broker (${(err as Error).message}); retrying in ${delay / 1000}s`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 30_000);
    }
  }
}
