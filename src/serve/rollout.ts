// Rollouts inside serve: while one is rolling, serve takes a step
// each second (sql/assignment/0017 decides: pass the wave, finish, halt).
// Nothing runs while none is: a start or resume NOTIFYs mesh_rollout, and
// serve takes one look when it starts, so a rollout survives a serve restart.
import type { Sql } from '../store/connect.js';
import type { Signer } from '../home/home.js';
import { advanceRollout } from '../assignment/rollout.js';

const STEP_MS = 1000;

export class Roller {
  private running = false;
  private again = false;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  private unlisten?: () => Promise<void>;
  private last = '';

  constructor(
    private readonly sql: Sql,
    private readonly signer: Signer,
    private readonly log: (line: string) => void,
  ) {}

  async start(): Promise<void> {
    const l = await this.sql.listen('mesh_rollout', () => this.rouse());
    this.unlisten = l.unlisten;
    this.rouse();
  }

  private rouse(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = true;
    void this.step().finally(() => {
      this.running = false;
    });
  }

  private async step(): Promise<void> {
    let more = false;
    try {
      const s = await advanceRollout(this.sql, this.signer);
      if (s) {
        const now = `${s.rollout} ${s.state} ${s.wave}`;
        if (now !== this.last)
          this.log(`serve: rollout ${s.rollout} is ${s.state}${s.wave ? ` at wave ${s.wave}` : ''}`);
        this.last = now;
        if (s.declared.length)
          this.log(`serve: rollout ${s.rollout} released ${s.declared.map((d) => `${d.node} ${d.serial}`).join(', ')}`);
        if (s.restored.length)
          this.log(`serve: rollout ${s.rollout} restored ${s.restored.map((d) => `${d.node} ${d.serial}`).join(', ')}`);
        more = s.state === 'rolling';
      }
    } catch (err) {
      this.log(`serve: a rollout step failed (${(err as Error).message}); trying again in ${STEP_MS / 1000}s`);
      more = true;
    }
    if ((more || this.again) && !this.stopped) {
      this.again = false;
      this.timer = setTimeout(() => this.rouse(), more ? STEP_MS : 0);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.unlisten?.().catch(() => {});
  }
}
