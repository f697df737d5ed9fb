// W2 inside serve: after an enrolment, a rekey or a settled rotation, every
// node whose composition changed is owed a declaration, through the one W2
// step (src/provision/redeclare.ts): an enrolment also names the node whose
// secrets are made again first (S3). The change itself is already committed,
// so a failure (the database restarting, a lock timeout) must not wait for the
// next operator command: serve tries again, backing off from 1 s to 60 s,
// until one attempt succeeds.
//
// Calls that arrive while one is running share the next run: a storm of 1,000
// enrolments composes the fleet twice, not 1,000 times (each run declares
// every change committed before it started, so none is missed).
import type { Sql } from '../store/connect.js';
import type { Signer } from '../home/home.js';
import { redeclare, type Redeclared } from '../provision/redeclare.js';

const NOTHING: Redeclared = { redeclared: [], remade: [], notRemade: [], held: [] };

interface Run {
  whys: Set<string>;
  holders: Set<string>;
}

export class Redeclarer {
  private timer?: NodeJS.Timeout;
  private delay = 1000;
  private stopped = false;
  private running?: Promise<Redeclared>;
  private next?: Run & { done: Promise<Redeclared> };

  constructor(
    private readonly sql: Sql,
    private readonly signer: Signer,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Declare every changed node, in a run that starts after this call, first
   * making again what HOLDERS (nodes back with new keys) have no current
   * copy of; on failure, say so and try again later. Never throws.
   */
  now(why: string, holders: string[] = []): Promise<Redeclared> {
    if (!this.running) return this.start({ whys: new Set([why]), holders: new Set(holders) });
    if (this.next) {
      this.next.whys.add(why);
      holders.forEach((h) => this.next!.holders.add(h));
      return this.next.done;
    }
    const run: Run = { whys: new Set([why]), holders: new Set(holders) };
    const done = this.running.then(() => {
      this.next = undefined;
      return this.start(run);
    });
    this.next = { ...run, done };
    return done;
  }

  private start(run: Run): Promise<Redeclared> {
    const p = this.attempt([...run.whys].join(', '), [...run.holders]).finally(() => {
      if (this.running === p) this.running = undefined;
    });
    this.running = p;
    return p;
  }

  private async attempt(why: string, holders: string[]): Promise<Redeclared> {
    clearTimeout(this.timer);
    this.timer = undefined;
    try {
      const r = await redeclare({ sql: this.sql, signer: this.signer, holders });
      this.delay = 1000;
      for (const m of r.remade)
        this.log(`serve: made ${m.secret} again (generation ${m.generation}) for ${m.holders.join(', ')} (${why})`);
      for (const f of r.notRemade)
        this.log(`serve: ${holders.join(', ')} holds no current copy of ${f.secret}: ${f.reason}`);
      const d = r.redeclared;
      if (d.length) this.log(`serve: re-declaring ${d.map((x) => `${x.node} ${x.serial}`).join(', ')} (${why})`);
      else this.log(`serve: no node's composition changed (${why})`);
      return r;
    } catch (err) {
      if (!this.stopped) {
        this.log(
          `serve: the nodes ${why} changed were not declared again (${(err as Error).message}); trying again in ${this.delay / 1000}s`,
        );
        this.timer = setTimeout(() => void this.now(why, holders), this.delay);
        this.delay = Math.min(this.delay * 2, 60_000);
      }
      return NOTHING;
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
