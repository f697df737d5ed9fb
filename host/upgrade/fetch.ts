// A package's bytes, over the broker (V2). The host asks serve for a few
// chunks at a time (an agent.package message naming the sha256 and the
// chunks wanted) and serve answers each on this node's own queue as an
// agent-chunk message. A few at a time: the node's queue keeps only its
// newest few messages, so a whole package sent at once would push out its
// own head. A window that does not arrive is asked for again; no progress
// for the whole wait is a failure of this apply (MSHZ7), tried again at the
// next declaration or reconcile. The bytes are not trusted here: the caller
// checks them against the signed sha256.
import { refuse } from '../../src/sys/errors.js';

/** Chunks asked for at once: what the node's queue holds comfortably beside a declaration. */
export const WINDOW = 4;
/** A window not complete after this long is asked for again. */
const ASK_AGAIN_MS = 5000;

export interface ChunkHeaders {
  sha256: string;
  n: number;
  of: number;
}

export class PackageFetch {
  private readonly chunks = new Map<number, Buffer>();
  private of: number | undefined;
  private asked = -1;
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  private done!: (b: Buffer) => void;
  private fail!: (e: Error) => void;
  readonly bytes: Promise<Buffer>;

  constructor(
    readonly sha256: string,
    private readonly size: number,
    private readonly ask: (from: number, count: number) => void,
    private readonly waitMs: number,
  ) {
    this.bytes = new Promise((res, rej) => {
      this.done = res;
      this.fail = rej;
    });
    this.bytes.catch(() => {});
    this.deadline = setTimeout(() => this.stop(), waitMs);
    this.next();
  }

  /** One agent-chunk message. Chunks of another package are not ours. */
  take(h: ChunkHeaders, bytes: Buffer): void {
    if (h.sha256 !== this.sha256 || this.chunks.has(h.n)) return;
    this.of = h.of;
    this.chunks.set(h.n, bytes);
    // Progress: the wait starts again.
    clearTimeout(this.deadline);
    this.deadline = setTimeout(() => this.stop(), this.waitMs);
    if (this.chunks.size === this.of) {
      this.end();
      this.done(Buffer.concat([...Array(this.of).keys()].map((i) => this.chunks.get(i)!)));
      return;
    }
    // The window is in: ask for the next.
    if ([...Array(WINDOW).keys()].every((i) => this.asked + i >= this.of! || this.chunks.has(this.asked + i)))
      this.next();
  }

  private next(): void {
    let from = 0;
    while (this.chunks.has(from)) from++;
    this.asked = from;
    this.ask(from, WINDOW);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.next(), ASK_AGAIN_MS);
  }

  private end(): void {
    clearTimeout(this.timer);
    clearTimeout(this.deadline);
  }

  stop(): void {
    this.end();
    const got = [...this.chunks.values()].reduce((a, b) => a + b.length, 0);
    this.fail(
      refuse(
        'MSHZ7',
        `the package ${this.sha256.slice(0, 12)} did not come over the broker: ${got} of ${this.size} bytes in ${Math.round(this.waitMs / 1000)} s without progress`,
      ),
    );
  }
}
