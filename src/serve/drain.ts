// serve drains the outbox (W1, W3): woken by NOTIFY mesh_outbox (sent at the
// commit of whatever owed a node something) and by a periodic sweep that is one
// cheap query when nothing is owed. Rows are taken `for update skip locked`, so
// several serves drain at once without sending a row twice; each is published
// with confirms and marked delivered only after its confirm, in the same
// transaction that holds its lock. Killed mid-drain, the transaction rolls
// back and the next serve sends them again (hosts drop what is not newer).
import type { ConfirmChannel } from 'amqplib';
import type { Sql } from '../store/connect.js';
import type { BrokerConfig } from '../home/home.js';
import { adminTurns } from '../broker/admin.js';
import type { Connection } from '../broker/connect.js';
import type { Turns } from '../broker/turns.js';
import { toNode, Unroutable } from '../broker/publish.js';
import { followHold, type Hold } from '../broker/hold.js';
import { queueOf } from '../wire/names.js';

/**
 * Confirm channels the drain publishes over. One channel is one process in the
 * broker, so one channel's publishes run on one core; several use several.
 */
export const PUBLISH_CHANNELS = 4;
/**
 * Rows one transaction takes: a kill loses at most this many confirms, all sent again.
 * With DRAIN_LANES, what the broker has in flight at once: enough to keep it publishing
 * while the lanes mark and take in SQL.
 */
export const DRAIN_BATCH = 1000;
/**
 * Batches in flight at once, each its own transaction (skip locked keeps their
 * rows apart): while one waits on the broker's confirms another is taken or
 * marked in SQL, so neither side idles between batches. Lanes take
 * in turn (takeTurns): started together they would take together, publish
 * together and wait on their confirms together, the broker idle while all of
 * them were in SQL; in turn, each takes while the others' publishes are in the broker.
 */
export const DRAIN_LANES = 4;

/** Waits for the turn to take, and returns what hands it on. */
export type TakeTurn = () => Promise<() => void>;

/** One turn at a time among the lanes that share it, in the order they asked. */
export function takeTurns(): TakeTurn {
  let last = Promise.resolve();
  return () => {
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const before = last;
    last = last.then(() => mine);
    return before.then(() => release);
  };
}

interface Owed {
  id: string;
  node: string;
  kind: string;
  serial: string;
  payload: string;
}

/** Why a publish was not confirmed, as the outbox's last_error says it. */
function reason(node: string, err: unknown): string {
  return err instanceof Unroutable
    ? `the node's queue ${queueOf(node)} does not exist`
    : `the broker did not confirm it (${(err as Error).message})`;
}

/**
 * One batch: take what is owed and due, publish it with confirms, mark each
 * row delivered or failed. CHANNELS undefined means the broker cannot be
 * reached (BROKER_ERROR says why): the rows stay owed and say so.
 */
export async function drainOnce(
  sql: Sql,
  channels: ConfirmChannel[] | undefined,
  opts: { batch?: number; everything?: boolean; brokerError?: string; turn?: TakeTurn } = {},
): Promise<{ taken: number; delivered: number }> {
  return sql.begin(async (tx) => {
    const handOn = await opts.turn?.();
    // The envelope as text: half the bytes of bytea's hex on the wire, and the same bytes once encoded (it is UTF-8 JSON).
    let rows: Owed[];
    try {
      rows = await tx<Owed[]>`select id, node, kind, serial, convert_from(payload, 'UTF8') as payload
                                from assignment.take_owed(${opts.batch ?? DRAIN_BATCH}, ${opts.everything ? 'infinity' : 'now'}::text::timestamptz)`;
    } finally {
      handOn?.();
    }
    if (rows.length === 0) return { taken: 0, delivered: 0 };
    const ok: string[] = [],
      failed: string[] = [],
      errors: string[] = [];
    if (!channels?.length) {
      for (const r of rows) {
        failed.push(r.id);
        errors.push(`the broker cannot be reached (${opts.brokerError ?? 'no connection'})`);
      }
    } else {
      await Promise.all(
        rows.map(async (r, i) => {
          try {
            // Mandatory: a node whose queue is gone (retired) is said, not silently skipped.
            // In the one delivery mode (W3): SQL keeps every row, and a host asks for its newest on every connect.
            await toNode(channels[i % channels.length]!, queueOf(r.node), Buffer.from(r.payload, 'utf8'), {
              mandatory: true,
              messageId: `${r.node}:${r.serial}`,
              type: r.kind,
              contentType: 'application/json',
            });
            ok.push(r.id);
          } catch (err) {
            failed.push(r.id);
            errors.push(reason(r.node, err));
          }
        }),
      );
    }
    if (ok.length) await tx`select assignment.mark_delivered(${ok.map(String)}::text[]::bigint[])`;
    if (failed.length)
      await tx`select assignment.mark_failed(${failed.map(String)}::text[]::bigint[], ${errors}::text[])`;
    return { taken: rows.length, delivered: ok.length };
  });
}

export interface DrainerOptions {
  sweepMs?: number;
  batch?: number;
  log(line: string): void;
  /** Each turn of the drain loop, once its sweep is done: the loop that feeds systemd's watchdog. */
  turned?(): void;
  /** Each batch: how many taken, how many confirmed, and how long take, publish, confirm and mark took. */
  drained?(r: { taken: number; delivered: number; seconds: number }): void;
}

/** The drain loop of one serve: its own broker connection, LISTEN, and the sweep. */
export class Drainer {
  private conn?: Connection;
  private channels?: ConfirmChannel[];
  private brokerError?: string;
  private lost = false;
  /** Whether the broker holds the outbox's publishes now (a resource alarm). */
  private hold?: Hold;
  private woken = false;
  private wake?: () => void;
  private stopped = false;
  private running?: Promise<void>;
  private unlisten?: () => Promise<void>;
  private readonly sweepMs: number;
  private readonly turns: Turns;

  constructor(
    private readonly sql: Sql,
    broker: BrokerConfig,
    private readonly opts: DrainerOptions,
  ) {
    this.sweepMs = opts.sweepMs ?? 5_000;
    this.turns = adminTurns(broker);
  }

  async start(): Promise<void> {
    const l = await this.sql.listen('mesh_outbox', () => this.rouse());
    this.unlisten = l.unlisten;
    // Whatever was owed before this serve started (another serve killed mid-drain) is looked at once now.
    this.woken = true;
    this.running = this.loop();
  }

  private rouse(): void {
    this.woken = true;
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
    await this.unlisten?.().catch(() => {});
    await this.conn?.close().catch(() => {});
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        const woken = this.woken;
        this.woken = false;
        // Idle: one cheap query a sweep, and only while the broker is reachable (else every sweep retries).
        if (woken || !this.channels || (await this.sql`select assignment.owed_now() as owed`)[0]!.owed)
          await this.goingRound(this.drainAll());
      } catch (err) {
        this.opts.log(`serve: the outbox was not drained (${(err as Error).message}); trying again at the next sweep`);
      }
      this.opts.turned?.();
      if (this.stopped || this.woken) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.sweepMs);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /**
   * DRAIN awaited. While the broker holds the outbox's publishes its confirms wait for the broker,
   * and the loop still says it turns each sweep: it knows why it waits, and systemd restarting serve
   * would not make the broker let go. A drain that stalls for any other reason says nothing: wedged.
   */
  private async goingRound(drain: Promise<void>): Promise<void> {
    const done = drain.then(() => true);
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<false>((r) => (timer = setTimeout(() => r(false), this.sweepMs)));
      const finished = await Promise.race([done, tick]).finally(() => clearTimeout(timer));
      if (finished) return;
      if (this.hold?.reason) this.opts.turned?.();
    }
  }

  private async drainAll(): Promise<void> {
    const back = !this.channels;
    const channels = await this.connect();
    // Back from a broker outage: everything owed is due, whatever its row backoff says.
    const everything = back && channels !== undefined;
    const batch = this.opts.batch ?? DRAIN_BATCH;
    let total = 0;
    const turn = takeTurns();
    // Unreachable broker: one lane marks what is due failed, once.
    const lanes = await Promise.allSettled(
      Array.from({ length: channels ? DRAIN_LANES : 1 }, async () => {
        for (;;) {
          const t0 = performance.now();
          const r = await drainOnce(this.sql, channels, { everything, batch, brokerError: this.brokerError, turn });
          if (r.taken) this.opts.drained?.({ ...r, seconds: (performance.now() - t0) / 1000 });
          total += r.delivered;
          if (r.taken < batch || !channels || this.stopped) break;
        }
      }),
    );
    if (total) this.opts.log(`serve: delivered ${total} owed message${total === 1 ? '' : 's'}`);
    const failed = lanes.find((l): l is PromiseRejectedResult => l.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async connect(): Promise<ConfirmChannel[] | undefined> {
    if (this.channels) return this.channels;
    try {
      // A connection lost (its broker node died) is followed by the next node's.
      if (this.brokerError === undefined && this.lost) this.turns.moveOn();
      this.lost = false;
      const { conn } = await this.turns.connect('mesh serve outbox');
      const channels = await Promise.all(Array.from({ length: PUBLISH_CHANNELS }, () => conn.createConfirmChannel()));
      conn.on('error', () => {});
      // Said, so an outbox that grows meanwhile has its why.
      const hold = followHold(conn, "the outbox's publishes", 'what is owed waits until it lets go', (line) =>
        this.opts.log(`serve: ${line}`),
      );
      conn.on('close', () => {
        if (this.conn === conn) {
          this.hold = undefined;
          this.conn = undefined;
          this.channels = undefined;
          this.lost = true;
        }
      });
      // A channel that closed cannot confirm again: start over with a fresh connection.
      for (const ch of channels) {
        ch.on('error', () => {});
        ch.on('close', () => {
          if (this.conn === conn) {
            this.conn = undefined;
            this.channels = undefined;
            void conn.close().catch(() => {});
          }
        });
      }
      this.conn = conn;
      this.hold = hold;
      this.channels = channels;
      if (this.brokerError) this.opts.log('serve: the outbox reaches the broker again');
      this.brokerError = undefined;
      return channels;
    } catch (err) {
      const said = (err as Error).message;
      if (said !== this.brokerError)
        this.opts.log(`serve: the outbox cannot reach the broker (${said}); what is owed stays owed`);
      this.brokerError = said;
      return undefined;
    }
  }
}
