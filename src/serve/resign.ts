// Freshness inside serve: a declaration holds until its signed
// expiry. Every so often serve signs again each node's newest declaration
// that is past half its life (a new serial and expiry; the same resources,
// so the host changes nothing and restarts nothing). The check is one
// indexed query; it runs at an eighth of the lifetime, at most every ten
// minutes and at least every second, so a declaration is re-signed well
// before it expires even if one round fails.
import type { Sql } from '../store/connect.js';
import type { Signer } from '../home/home.js';
import { declareDue } from '../assignment/declare.js';

const MAX_MS = 10 * 60_000;
const MIN_MS = 1_000;

export class Resigner {
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly sql: Sql,
    private readonly signer: Signer,
    private readonly log: (line: string) => void,
  ) {}

  start(): void {
    void this.round();
  }

  private async round(): Promise<void> {
    let every = MAX_MS;
    try {
      const [s] = await this
        .sql`select extract(epoch from lifetime)::float8 * 1000 as ms from assignment.freshness_setting`;
      every = Math.min(MAX_MS, Math.max(MIN_MS, Number(s!.ms) / 8));
      const d = await declareDue({ sql: this.sql, signer: this.signer });
      if (d.length)
        this.log(
          `serve: signed again ${d.length} declaration${d.length === 1 ? '' : 's'} past half their lifetime (${d
            .slice(0, 10)
            .map((x) => `${x.node} ${x.serial}`)
            .join(', ')}${d.length > 10 ? ', ...' : ''})`,
        );
    } catch (err) {
      this.log(
        `serve: declarations near their expiry were not signed again (${(err as Error).message}); trying again in ${Math.round(every / 1000)}s`,
      );
    }
    if (!this.stopped) this.timer = setTimeout(() => void this.round(), every);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
