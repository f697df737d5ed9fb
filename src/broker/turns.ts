// Turns over a list of brokers, the one order for every program that knows
// several: serve and its drain over broker.json's nodes, a host's
// link over its identity's brokers, enrolment over a token's. Each place once,
// from the current one, the first that answers; a failure or a lost
// connection moves on to the next, so a dead node is passed over at once.
// After a lost connection (not a failed attempt) a list's user may step
// further, by an offset of its own: the hosts a dead node held then spread
// over the others instead of all landing on the one after it.
import { connectBroker, type Connection, type Endpoint } from './connect.js';

/** What a turn needs of a list's entry: where it is. */
export interface Place {
  host: string;
  port: number;
}

/** Every place was tried and none answered; the message says what each said. */
export class NoneAnswered extends Error {}

export class Turns<T extends Place = Endpoint> {
  /** The place of the current (or last) attempt, found again by address in a list read afresh. */
  private last: Place | undefined;
  private step = 0;
  /** The current place answered (a connection was held there): the next move is a lost connection's. */
  private held = false;
  private readonly list: () => T[];

  /**
   * LIST: fixed, or read at every turn (a host's brokers change while it runs).
   * START: where a first turn goes, or one whose last place left the list.
   * SPREAD: after a lost connection, how many places past the next one to go
   * (0 to M-1 of the M others); by default none, the next.
   */
  constructor(
    list: T[] | (() => T[]),
    private readonly start: (n: number) => number = () => 0,
    private readonly spread: (m: number) => number = () => 0,
  ) {
    if (Array.isArray(list) && list.length === 0)
      throw new Error('no broker to connect to: broker.json\'s "amqp" is an empty list.');
    this.list = Array.isArray(list) ? () => list : list;
  }

  /** The place to try next: the last again, or the one after it once moved on. */
  current(): T {
    const list = this.list();
    if (list.length === 0) throw new Error('no broker to connect to: the list of brokers is empty.');
    const l = this.last;
    const at = l ? list.findIndex((p) => p.host === l.host && p.port === l.port) : -1;
    const i = at < 0 ? this.start(list.length) : (at + this.step) % list.length;
    this.step = 0;
    this.held = false;
    this.last = list[i]!;
    return list[i]!;
  }

  /** The current place answered: a connection is held there (connect() says it itself). */
  connected(): void {
    this.held = true;
  }

  /**
   * The next turn goes to another place: after a failed attempt the next one,
   * so each is tried in turn; after a lost connection the next one plus this
   * user's offset, never the lost place while there is another.
   */
  moveOn(): void {
    this.step = this.held ? this.spreadStep() : 1;
  }

  private spreadStep(): number {
    const others = this.list().length - 1;
    return others <= 1 ? 1 : 1 + (this.spread(others) % others);
  }

  /**
   * Each place once, from the current one; the first that answers. STOP says
   * which failure ends the round at once (rethrown as it came): one every place
   * would give alike, and the next round starts at that place again. Otherwise rejects with NoneAnswered saying what each said.
   */
  async connect(
    this: Turns<Endpoint>,
    name: string,
    stop: (err: Error) => boolean = () => false,
  ): Promise<{ conn: Connection; endpoint: Endpoint }> {
    const said: string[] = [];
    const n = this.list().length;
    for (let k = 0; k < n; k++) {
      const endpoint = this.current();
      try {
        const conn = await connectBroker(endpoint, { name });
        this.connected();
        return { conn, endpoint };
      } catch (err) {
        // A failure every place would give alike: the next round starts here again (it answered).
        if (stop(err as Error)) throw err;
        this.moveOn();
        said.push(`${endpoint.host}:${endpoint.port}: ${(err as Error).message}`);
      }
    }
    throw new NoneAnswered(said.join('; '));
  }
}
