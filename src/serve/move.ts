// serve's part of moving mesh.control and mesh.build from classic to quorum
// under their own names (src/broker/topology.ts): every few seconds while a
// move is under way, the next step. mesh.control: serve is its consumer, so
// it stops consuming a drained, unbound queue, lets what it took from it
// settle, and only then asks the broker to delete it (if empty, if unused: a
// second serve still consuming it makes the broker refuse, and that serve
// takes the step itself). mesh.build: builders may read only mesh.build, so
// serve hands what the old queue and mesh.build.moving hold back to the
// exchange (shovel); a builder whose queue was made again reconnects.
import type { Channel } from 'amqplib';
import type { Connection } from '../broker/connect.js';
import {
  BUILD_QUEUE,
  BUILD_REQUEST,
  CONTROL_QUEUE,
  CONTROL_KINDS,
  exists,
  finishMove,
  kindOf,
  moving,
  shovel,
} from '../broker/topology.js';

export interface Consuming {
  /** Start consuming `queue` on the serve's channel; resolves to the consumer tag. */
  consume(queue: string): Promise<string>;
  /** Every message serve took so far is acked or handed back. */
  settled(): Promise<unknown>;
  log(line: string): void;
}

export class Mover {
  private readonly tags = new Map<string, string>();
  private timer?: NodeJS.Timeout;
  private done = false;

  constructor(
    private readonly conn: Connection,
    private readonly ch: Channel,
    private readonly c: Consuming,
    private readonly everyMs = 3_000,
  ) {}

  /** Consume mesh.control and, while a move is under way, mesh.control.moving; step until both queues are quorum. */
  async start(stillMoving: string[]): Promise<void> {
    await this.follow(CONTROL_QUEUE);
    if (await exists(this.conn, moving(CONTROL_QUEUE))) await this.follow(moving(CONTROL_QUEUE));
    if (stillMoving.length === 0) {
      this.done = true;
      return;
    }
    this.c.log(
      `serve: moving ${stillMoving.join(' and ')} to quorum queues (nothing is lost: the old queue is drained first)`,
    );
    const tick = async () => {
      try {
        if (await this.step()) {
          this.done = true;
          this.c.log('serve: mesh.control and mesh.build are quorum queues');
          return;
        }
      } catch (err) {
        this.c.log(`serve: the move to quorum queues waits (${(err as Error).message})`);
      }
      if (!this.done) this.timer = setTimeout(() => void tick(), this.everyMs);
    };
    this.timer = setTimeout(() => void tick(), this.everyMs);
  }

  stop(): void {
    this.done = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private async follow(queue: string): Promise<void> {
    if (!this.tags.has(queue)) this.tags.set(queue, await this.c.consume(queue));
  }

  private async unfollow(queue: string): Promise<void> {
    const tag = this.tags.get(queue);
    if (tag === undefined) return;
    this.tags.delete(queue);
    await this.ch.cancel(tag);
    await this.c.settled();
  }

  /** One step of each move; true once both are done. */
  private async step(): Promise<boolean> {
    const control = await this.stepControl();
    const build = await this.stepBuild();
    return control && build;
  }

  private async drained(queue: string): Promise<boolean> {
    const probe = await this.conn.createChannel();
    probe.on('error', () => {});
    try {
      return (await probe.checkQueue(queue)).messageCount === 0;
    } catch {
      return true;
    } finally {
      await probe.close().catch(() => {});
    }
  }

  private async stepControl(): Promise<boolean> {
    const old =
      (await kindOf(this.conn, CONTROL_QUEUE)) === 'classic'
        ? CONTROL_QUEUE
        : (await exists(this.conn, moving(CONTROL_QUEUE)))
          ? moving(CONTROL_QUEUE)
          : undefined;
    if (!old) {
      await this.follow(CONTROL_QUEUE);
      return true;
    }
    // Unbound, so nothing new arrives; drained, so it is safe to stop consuming it.
    if (!(await this.drained(old))) {
      await this.follow(old);
      return false;
    }
    await this.unfollow(old);
    const r = await finishMove(this.conn, CONTROL_QUEUE, CONTROL_KINDS);
    // Refused (another serve still consumes it: it takes the step itself, and
    // neither consumes a drained, unbound queue again, so the next try succeeds),
    // or a message came back to it (handed back by a serve): consume it again.
    if ((await exists(this.conn, old)) && !(await this.drained(old))) await this.follow(old);
    await this.follow(CONTROL_QUEUE);
    if (await exists(this.conn, moving(CONTROL_QUEUE))) await this.follow(moving(CONTROL_QUEUE));
    return r === 'quorum';
  }

  private async stepBuild(): Promise<boolean> {
    const classic = (await kindOf(this.conn, BUILD_QUEUE)) === 'classic';
    // The keys route to the quorum queue of the moment (mesh.build.moving while the old is classic).
    if (classic) await shovel(this.conn, BUILD_QUEUE, BUILD_REQUEST);
    const r = await finishMove(this.conn, BUILD_QUEUE, [BUILD_REQUEST], { whileConsumed: true });
    if (
      r === 'moving' &&
      (await kindOf(this.conn, BUILD_QUEUE)) === 'quorum' &&
      (await exists(this.conn, moving(BUILD_QUEUE)))
    ) {
      await shovel(this.conn, moving(BUILD_QUEUE), BUILD_REQUEST);
      return (await finishMove(this.conn, BUILD_QUEUE, [BUILD_REQUEST], { whileConsumed: true })) === 'quorum';
    }
    return r === 'quorum';
  }
}
