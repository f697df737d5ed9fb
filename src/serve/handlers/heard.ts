// R3: a node says it is there once a minute, name only. Recorded in batches:
// at 100,000 nodes that is 1,700 a second, and one UPDATE for a batch costs
// little more than one for a row. Each message is acked only after the batch
// that holds it has committed.
import type { ConsumeMessage, Channel } from 'amqplib';
import type { Sql } from '../../store/connect.js';
import { sender } from '../context.js';

export class HeardBatcher {
  private names: string[] = [];
  private msgs: ConsumeMessage[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly sql: Sql,
    private readonly ch: () => Channel,
    private readonly prefix = '',
    private readonly max = 1000,
    private readonly waitMs = 50,
  ) {}

  add(msg: ConsumeMessage): void {
    const from = sender(msg, this.prefix);
    this.msgs.push(msg);
    if (from.kind === 'node') this.names.push(from.name);
    if (this.msgs.length >= this.max) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.waitMs);
  }

  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const names = this.names;
    const msgs = this.msgs;
    this.names = [];
    this.msgs = [];
    if (msgs.length === 0) return this.flushing;
    this.flushing = this.flushing.then(async () => {
      const ch = this.ch();
      try {
        await this.sql`select inventory.mark_heard_many(${[...new Set(names)]}::text[])`;
        for (const m of msgs) ch.ack(m);
      } catch {
        // Not recorded: hand them back to the broker for another try.
        for (const m of msgs) {
          try {
            ch.nack(m, false, true);
          } catch {
            /* channel gone: redelivered anyway */
          }
        }
      }
    });
    return this.flushing;
  }
}
