// V3: the recover a host sends says the highest serial it applied; one
// definition written by the host and read by serve (src/wire/recover.ts).
import { test } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readRecover, writeRecover } from '../../src/wire/recover.js';
import { WireError } from '../../src/wire/envelope.js';

test('the serial a host applied round-trips, and an agent from before says none', () => {
  assert.equal(readRecover(writeRecover({ applied: 4 })), { applied: 4 });
  assert.equal(readRecover(writeRecover({ applied: 0 })), { applied: 0 });
  assert.equal(readRecover(Buffer.from('{}')), { applied: null });
});

test('a recover of another shape is malformed (MSHN0), never read as no serial', () => {
  for (const bad of ['[]', '{"v":1}', '{"v":1,"applied":-1}', '{"v":1,"applied":1.5}', '{"v":2,"applied":3}', 'x']) {
    try {
      readRecover(Buffer.from(bad));
      assert.unreachable(bad);
    } catch (err) {
      assert.instance(err, WireError, bad);
      assert.is((err as WireError).fault, 'malformed', bad);
      assert.is((err as WireError).code, 'MSHN0', bad);
    }
  }
});

test.run();
