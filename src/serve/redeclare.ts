// W2 inside serve: after an enrolment, a rekey or a settled rotation, every
// node whose composition changed is owed a declaration. The change itself is
// already committed, so a failure to declare (the database restarting, a lock
// timeout) must not wait for the next operator command: serve tries again,
// backing off from 1 s to 60 s, until one attempt succeeds.
import type { Sql } from '../store/connect.js';
import type { Signer } from '../home/home.js';
import { declareChanged, type Declared } from '../assignment/declare.js';

export class Redeclarer {
  private timer?: NodeJS.Timeout;
  private delay = 1000;
  private stopped = false;

  constructor(private readonly sql: Sql, private readonly signer: Signer, private readonly log: (line: string) => void) {}

  /** Declare every changed node now; on failure, say so and try again later. Never throws. */
  async now(why: string): Promise<Declared[]> {
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      const d = await declareChanged({ sql: this.sql, signer: this.signer });
      this.delay = 1000;
      if (d.length) this.log(`serve: re-declaring ${d.map((x) => `${x.node} ${x.serial}`).join(', ')} (${why})`);
      return d;
    } catch (err) {
      if (!this.stopped) {
        this.log(`serve: the nodes ${why} changed were not declared again (${(err as Error).message}); trying again in ${this.delay / 1000}s`);
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
