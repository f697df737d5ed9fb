// Hosts leaving a dead broker node spread over the others (src/broker/turns.ts
// with the link's offset by name, host/link/link.ts spreadOf): a lost
// connection steps past the next place by the host's own offset, never back
// to the lost one; a failed attempt still steps to the next, so each place is
// tried in turn.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { Turns } from '../../src/broker/turns.js';
import { spreadOf } from '../../host/link/link.js';

const T = suite('turns spread the hosts a dead node held');
const places = ['a', 'b', 'c', 'd'].map((host) => ({ host, port: 5671 }));

/** A host held at place a (its connection there), then lost it: where its next turn goes. */
function afterLost(name: string): string {
  const t = new Turns(
    places,
    () => 0,
    (m) => spreadOf(name, m),
  );
  assert.is(t.current().host, 'a');
  t.connected();
  t.moveOn();
  return t.current().host;
}

T('200 hosts that lost node a go to b, c and d, each a share, none back to a', () => {
  const count = new Map<string, number>();
  for (let i = 0; i < 200; i++) {
    const at = afterLost(`web${i}`);
    count.set(at, (count.get(at) ?? 0) + 1);
  }
  assert.is(count.get('a'), undefined, 'none back to the lost node');
  for (const p of ['b', 'c', 'd'])
    assert.ok((count.get(p) ?? 0) >= 40, `${p} took ${count.get(p) ?? 0} of 200: ${JSON.stringify([...count])}`);
  assert.is(afterLost('web7'), afterLost('web7'), 'the same host goes the same way every time');
});

T('a failed attempt steps to the next place, so a round tries each in turn', () => {
  for (const name of ['web1', 'web2', 'web3']) {
    const t = new Turns(
      places,
      () => 0,
      (m) => spreadOf(name, m),
    );
    const seen = [t.current().host];
    for (let k = 0; k < 3; k++) {
      t.moveOn();
      seen.push(t.current().host);
    }
    assert.equal(seen, ['a', 'b', 'c', 'd'], name);
  }
});

T('with two places a lost connection goes to the other one', () => {
  const t = new Turns(
    places.slice(0, 2),
    () => 0,
    () => 5,
  );
  t.current();
  t.connected();
  t.moveOn();
  assert.is(t.current().host, 'b');
});

T.run();
