// Many callers' single requests, run as one (group commit). A caller alone
// goes on the event loop's next turn, waiting for no timer, with whatever
// else arrived in the same turn; while a batch is in flight the next requests
// gather and go together when it returns, at most MAX at a time. So under
// load a batch holds what arrived while the one before it ran, and one round
// trip serves them all. A batch that fails fails each of its callers.

export class Coalescer<In, Out> {
  private waiting: { item: In; resolve: (o: Out) => void; reject: (e: unknown) => void }[] = [];
  private running = false;

  constructor(
    /** One result for each item, in order. */
    private readonly run: (items: In[]) => Promise<Out[]>,
    private readonly max = 64,
  ) {}

  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.running) return;
      this.running = true;
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length) {
      const batch = this.waiting.splice(0, this.max);
      try {
        const outs = await this.run(batch.map((w) => w.item));
        if (outs.length !== batch.length) throw new Error(`a batch of ${batch.length} gave ${outs.length} results`);
        batch.forEach((w, i) => w.resolve(outs[i]!));
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    this.running = false;
  }
}
