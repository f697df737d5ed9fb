// Each name and address the mesh writes is read back by the one parser beside
// its writer (src/wire/names.ts): a broker account, HOST:PORT, a fingerprint,
// a node name. What the writer cannot have written, the parser refuses.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import {
  accountOf,
  accountFrom,
  joinHostPort,
  splitHostPort,
  isHostPort,
  isFingerprint,
  isNodeName,
} from '../../src/wire/names.js';

const N = suite('names: each writer read back by its parser');

N('a broker account: node and builder, with and without a prefix, read back as written', () => {
  for (const prefix of ['', 'ab12cd34.'])
    for (const kind of ['node', 'builder'] as const)
      for (const name of ['a', 'web-1', `z${'9'.repeat(62)}`])
        assert.equal(accountFrom(accountOf(name, prefix, kind), prefix), { kind, name });
  assert.is(accountOf('web1'), 'node.web1');
});

N('an account that is not one of the mesh is no account: another prefix, another kind, a name outside the rule', () => {
  for (const [user, prefix] of [
    ['other.node.web1', 'ab.'],
    ['guest', ''],
    ['admin.web1', ''],
    ['node.', ''],
    ['node.Web1', ''],
    ['node.web1.x', ''],
    ['node.1web', ''],
    [`node.a${'b'.repeat(63)}`, ''],
  ])
    assert.is(accountFrom(user!, prefix), undefined, user);
});

N('HOST:PORT read back as written; a port outside 1-65535 or a host with a stray character is refused', () => {
  for (const [host, port] of [
    ['broker.example', 5671],
    ['10.99.0.1', 1],
    ['a', 65535],
  ] as const)
    assert.equal(splitHostPort(joinHostPort(host, port)), { host, port });
  for (const bad of ['h:0', 'h:65536', 'h:99999', 'h:', ':5671', 'h', 'h:56 71', 'h\n:1', 'a b:1', '[::1]:1', 'h:1:2'])
    assert.not.ok(isHostPort(bad), bad);
  assert.throws(() => splitHostPort('h:65536'), /is not HOST:PORT/);
});

N('a fingerprint is 32 upper-case hex pairs; a node name is [a-z][a-z0-9-]{0,62}', () => {
  const fp = Array.from({ length: 32 }, (_, i) => (i * 7).toString(16).padStart(2, '0').toUpperCase()).join(':');
  assert.ok(isFingerprint(fp));
  for (const bad of [fp.toLowerCase(), fp.slice(3), `${fp}:00`, fp.replaceAll(':', '')])
    assert.not.ok(isFingerprint(bad), bad);
  for (const bad of ['', '1a', 'A', 'a.b', 'a_b', `a${'b'.repeat(63)}`]) assert.not.ok(isNodeName(bad), bad);
  assert.ok(isNodeName(`a${'b'.repeat(62)}`));
});

N.run();
