// Serve records reports and acknowledgements many a statement
// (src/sys/coalesce.ts): what arrives in one turn of the event loop goes as
// one batch, what arrives while a batch runs goes as the next, at most MAX a
// batch, and a batch that fails fails each of its callers and no other.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { Coalescer } from '../../src/sys/coalesce.js';

const C = suite('requests coalesced into batches');

/** A coalescer whose batches wait for RELEASE, recording each batch it was given. */
function held(max = 64) {
  const batches: number[][] = [];
  let release: () => void = () => {};
  const c = new Coalescer<number, number>(async (items) => {
    batches.push(items);
    await new Promise<void>((r) => (release = r));
    if (items.includes(-1)) throw new Error('the store refused the batch');
    return items.map((i) => i * 10);
  }, max);
  return { c, batches, release: () => release() };
}

const turn = () => new Promise((r) => setImmediate(r));

C('one turn goes as one batch; what arrives while it runs goes as the next, each caller given its own', async () => {
  const { c, batches, release } = held();
  const first = [1, 2, 3].map((i) => c.submit(i));
  await turn();
  const second = [4, 5].map((i) => c.submit(i));
  await turn();
  assert.equal(batches, [[1, 2, 3]], 'the second waits for the first to return');
  release();
  await Promise.all(first);
  await turn();
  assert.equal(batches, [
    [1, 2, 3],
    [4, 5],
  ]);
  release();
  assert.equal(await Promise.all([...first, ...second]), [10, 20, 30, 40, 50]);
});

C('at most MAX a batch', async () => {
  const { c, batches, release } = held(2);
  const all = [1, 2, 3, 4, 5].map((i) => c.submit(i));
  for (let i = 0; i < 3; i++) {
    await turn();
    release();
    await turn();
  }
  assert.equal(await Promise.all(all), [10, 20, 30, 40, 50]);
  assert.equal(batches, [[1, 2], [3, 4], [5]]);
});

C('a failed batch rejects each of its callers; the batch after it is given its results', async () => {
  const { c, release } = held();
  const bad = [7, -1].map((i) => c.submit(i).then(String, (e: Error) => e.message));
  await turn();
  const good = c.submit(8);
  release();
  assert.equal(await Promise.all(bad), ['the store refused the batch', 'the store refused the batch']);
  await turn();
  release();
  assert.is(await good, 80);
});

C.run();
