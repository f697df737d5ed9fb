// Change-freeze windows inside serve: every few seconds serve ends each window
// whose time is up (assignment.end_freezes, sql/assignment/0072) and, when one
// ended, takes W2's step, so what the window held goes out by itself. One
// small indexed query a round; several serve processes may run it (the update
// ends each window once).
import type { Sql } from '../store/connect.js';
import type { Redeclarer } from './redeclare.js';
import { endFreezes } from '../assignment/freeze.js';

const EVERY_MS = 2000;

export class Thawer {
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly sql: Sql,
    private readonly redeclare: Redeclarer,
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    void this.round();
  }

  private async round(): Promise<void> {
    try {
      const ended = await endFreezes(this.sql);
      if (ended.length) {
        this.log(`serve: freeze ${ended.join(', ')} ended: declaring what it held`);
        await this.redeclare.now(`freeze ${ended.join(', ')} ended`);
      }
    } catch (err) {
      this.log(
        `serve: freeze windows were not checked (${(err as Error).message}); trying again in ${EVERY_MS / 1000}s`,
      );
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.round(), EVERY_MS);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
