// The one outbound connection a node holds. Disconnection is ordinary: any
// loss is followed by another attempt after the backoff (L1). A wrong
// certificate is said in full every time (L2). SIGUSR1 rouses: it ends the
// current attempt or connection at once and tries again now, without
// resetting the backoff (L3); rouses in the same instant are one. A node that
// knows several brokers tries them in turn, from a place its
// name decides (startOf): a failed attempt or
// a lost connection moves to the next, a rouse tries the same one again; the
// list is read afresh at every attempt, so a brokers resource applied meanwhile
// (host/apply/brokers.ts) counts from the next attempt on.
import { createHash } from 'node:crypto';
import { connectBroker, type Connection } from '../../src/broker/connect.js';
import { PinMismatch } from '../../src/broker/pin.js';
import { Turns } from '../../src/broker/turns.js';
import { Backoff, type BackoffSettings } from '../../src/sys/backoff.js';
import type { Identity, BrokerAddress } from '../identity.js';

export interface LinkEvents {
  /** Set up consumers and timers on a fresh connection; resolves when set up. */
  connected(conn: Connection): Promise<void>;
  /** The connection is gone; stop timers that publish. */
  lost(): void;
  log(line: string): void;
}

/** Where NAME starts in a list of N brokers: the same place every run, different places across a fleet. */
export function startOf(name: string, n: number): number {
  return createHash('sha256').update(name).digest().readUInt32BE(0) % n;
}

/** How far past the next broker NAME goes after a lost connection, of M others: its own offset, so a dead node's hosts spread. */
export function spreadOf(name: string, m: number): number {
  return createHash('sha256').update(name).digest().readUInt32BE(4) % m;
}

/** Rouses closer together than this are one. */
const SAME_INSTANT_MS = 500;

export class Link {
  private readonly backoff: Backoff;
  private attempt: AbortController | undefined;
  private conn: Connection | undefined;
  private wake: (() => void) | undefined;
  private lastRouse = -Infinity;
  private stopped = false;
  attempts = 0;

  /**
   * The order brokers are dialled in (src/broker/turns.ts): the first of a run,
   * or when the last left the list, is chosen by the node's name, so a fleet
   * starting at once spreads over a cluster's nodes instead of every host
   * piling onto the first.
   */
  private readonly turns: Turns<BrokerAddress>;

  /**
   * `brokers`: the list to try, read at each attempt; by default the identity's as loaded.
   * Only what dialling needs of the identity (the lab's simulated hosts dial with it too).
   */
  constructor(
    private readonly id: Pick<Identity, 'name' | 'broker' | 'brokers' | 'password'>,
    settings: BackoffSettings,
    private readonly ev: LinkEvents,
    private readonly brokers: () => BrokerAddress[] = () => id.brokers,
  ) {
    this.backoff = new Backoff(settings);
    // Leaving a dead broker, hosts spread over the others by name too (not all onto the next one).
    this.turns = new Turns(
      brokers,
      (n) => startOf(id.name, n),
      (m) => spreadOf(id.name, m),
    );
  }

  /** L3: end what is in progress and try again now. */
  rouse(): void {
    const now = Date.now();
    // A machine suspending and resuming over and over must not build a
    // backlog of reconnections: a second rouse in the same instant is the first.
    if (now - this.lastRouse < SAME_INSTANT_MS) {
      this.ev.log(`roused again within ${SAME_INSTANT_MS} ms: taken as the same rouse`);
      return;
    }
    this.lastRouse = now;
    this.ev.log('roused: ending the current attempt and trying again now');
    this.attempt?.abort();
    if (this.conn) void this.conn.close().catch(() => {});
    this.wake?.();
  }

  stop(): void {
    this.stopped = true;
    this.attempt?.abort();
    if (this.conn) void this.conn.close().catch(() => {});
    this.wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
    });
  }

  async run(): Promise<void> {
    let failures = 0;
    const { vhost, user } = this.id.broker;
    // After a failure or a lost connection, the next broker; after a rouse, the same.
    let moveOn = false;
    while (!this.stopped) {
      this.attempt = new AbortController();
      const roused = () => this.attempt!.signal.aborted;
      this.attempts++;
      if (moveOn) this.turns.moveOn();
      const b = this.turns.current();
      moveOn = true;
      try {
        const conn = await connectBroker(
          { host: b.host, port: b.port, vhost, user, password: this.id.password, fingerprint: b.fingerprint },
          { name: `mesh-host ${this.id.name}`, signal: this.attempt.signal },
        );
        this.conn = conn;
        this.turns.connected();
        const closed = new Promise<string>((resolve) => {
          conn.on('close', (err?: Error) => resolve(err ? err.message : 'closed'));
          conn.on('error', () => {});
        });
        await this.ev.connected(conn);
        this.backoff.connected(Date.now());
        this.ev.log(
          failures > 0
            ? `back in: connected to ${b.host}:${b.port} after ${failures} failed attempt(s)`
            : `connected to ${b.host}:${b.port}`,
        );
        failures = 0;
        const why = await closed;
        this.conn = undefined;
        this.ev.lost();
        this.backoff.disconnected(Date.now());
        if (this.stopped) break;
        // Roused: we ended it ourselves and try again at once, without the wait.
        if (roused()) {
          moveOn = false;
          this.ev.log('ended the connection (roused); connecting again now');
          continue;
        }
        this.ev.log(`lost the broker (${why})`);
      } catch (err) {
        // Connected, then setting up failed (a channel refused): never leave it open behind us.
        if (this.conn) void this.conn.close().catch(() => {});
        this.conn = undefined;
        this.ev.lost();
        if (this.stopped) break;
        if (roused()) {
          moveOn = false;
          continue;
        } // a rouse ends the attempt and skips the wait
        failures++;
        // L2: never folded into a count: what answered is not our mesh.
        if (err instanceof PinMismatch) this.ev.log(`refusing the broker: ${err.message}`);
        else
          this.ev.log(
            `cannot reach the broker at ${b.host}:${b.port} (${(err as Error).message}); attempt ${failures}`,
          );
      }
      const wait = this.backoff.next();
      const ahead = this.brokers();
      this.ev.log(
        ahead.length > 1
          ? `next attempt in ${wait / 1000}s, to the next of ${ahead.length} brokers`
          : `next attempt in ${wait / 1000}s`,
      );
      this.attempt = new AbortController();
      const a = this.attempt;
      await this.sleep(wait);
      if (a.signal.aborted) continue;
    }
  }
}
