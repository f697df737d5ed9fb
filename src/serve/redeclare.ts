// W2 inside serve: after an enrolment, a rekey or a settled rotation, every
// node whose composition changed is owed a declaration. The change itself is
// already committed, so a failure to declare (the database restarting, a lock
// timeout) must not wait for the next operator command: serve tries again,
// backing off from 1 s to 60 s, until one attempt succeeds.
//
// Calls that arrive while one is running share the next run: a storm of 1,000
// enrolments composes the fleet twice, not 1,000 times (each run declares
// every change committed before it started, so none is missed).
import type { Sql } from '../store/connect.js';
import type { Signer } from '../home/home.js';
import { declareChanged, type Declared } from '../assignment/declare.js';

export class Redeclarer {
  private timer?: NodeJS.Timeout;
  private delay = 1000;
  private stopped = false;
  private running?: Promise<Declared[]>;
  private next?: { whys: Set<string>; done: Promise<Declared[]> };

  constructor(
    private readonly sql: Sql,
    private readonly signer: Signer,
    private readonly log: (line: string) => void,
  ) {}

  /** Declare every changed node, in a run that starts after this call; on failure, say so and try again later. Never throws. */
  now(why: string): Promise<Declared[]> {
    if (!this.running) return this.start(new Set([why]));
    if (this.next) {
      this.next.whys.add(why);
      return this.next.done;
    }
    const whys = new Set([why]);
    const done = this.running.then(() => {
      this.next = undefined;
      return this.start(whys);
    });
    this.next = { whys, done };
    return done;
  }

  private start(whys: Set<string>): Promise<Declared[]> {
    const run = this.attempt([...whys].join(', ')).finally(() => {
      if (this.running === run) this.running = undefined;
    });
    this.running = run;
    return run;
  }

  private async attempt(why: string): Promise<Declared[]> {
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      const d = await declareChanged({ sql: this.sql, signer: this.signer });
      this.delay = 1000;
      if (d.length) this.log(`serve: re-declaring ${d.map((x) => `${x.node} ${x.serial}`).join(', ')} (${why})`);
      return d;
    } catch (err) {
      if (!this.stopped) {
        this.log(
          `serve: the nodes ${why} changed were not declared again (${(err as Error).message}); trying again in ${this.delay / 1000}s`,
        );
        this.timer = setTimeout(() => void this.now(why), this.delay);
        this.delay = Math.min(this.delay * 2, 60_000);
      }
      return [];
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
