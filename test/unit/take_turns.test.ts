// The drain's lanes take their batches in turn (src/serve/drain.ts
// takeTurns): one lane in SQL's take at a time, in the order they asked, the
// next let in once the one before hands on. Started together, lanes would
// take, publish and wait on their confirms together, the broker idle while
// all of them are in SQL.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { takeTurns } from '../../src/serve/drain.js';

const T = suite("the drain's lanes take in turn");

T('one turn at a time, in the order asked; each starts only when the one before handed on', async () => {
  const turn = takeTurns();
  const said: string[] = [];
  let inside = 0;
  const lane = async (name: string, rounds: number) => {
    for (let i = 0; i < rounds; i++) {
      const handOn = await turn();
      inside++;
      said.push(`${name}${i}`);
      assert.is(inside, 1, 'two lanes held the turn at once');
      // The take's round trip: other lanes run meanwhile, and must wait.
      await new Promise((r) => setImmediate(r));
      inside--;
      handOn();
    }
  };
  await Promise.all([lane('a', 3), lane('b', 3), lane('c', 2)]);
  assert.equal(said, ['a0', 'b0', 'c0', 'a1', 'b1', 'c1', 'a2', 'b2']);
});

T('a lane that failed in its turn still hands it on (the take is in a finally)', async () => {
  const turn = takeTurns();
  const first = await turn();
  const second = turn();
  first(); // as drainOnce's finally does when its take threw
  const handOn = await second;
  handOn();
});

T.run();
