// Several brokers on the wire: the token carries every broker
// (written as `mesh token issue` writes it, read as `mesh-host enrol` reads
// it), an old token still reads as the one broker it names; the brokers
// resource is checked by the one parser, and a module may never carry one
// (the mesh composes it, as MSH31 says of wireguard, firewall and secret).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { readToken, writeToken } from '../../src/wire/token.js';
import { MeshError } from '../../src/sys/errors.js';
import { parseResources, parseModuleEntries } from '../../src/wire/parse_resources.js';
import { WireError } from '../../src/wire/envelope.js';

const fp = (seed: string) => createHash('sha256').update(seed).digest('hex').toUpperCase().match(/../g)!.join(':');
const three = [
  { address: 'mq1.example.net:5671', fingerprint: fp('mq1') },
  { address: 'mq2.example.net:5671', fingerprint: fp('mq2') },
  { address: '10.0.0.3:5671', fingerprint: fp('mq3') },
];
const PIN = 'a'.repeat(64);
const base = { vhost: 'v-1', node: 'web1', user: 'p.node.web1', secret: 's3cret', pin: PIN };

const T = suite('tokens with several brokers (E5 for the token)');

T('round trip: every broker, in order, the first also as the one an older host dials', () => {
  const text = writeToken({ ...base, broker: three[0]!.address, fingerprint: three[0]!.fingerprint, brokers: three });
  const t = readToken(text);
  assert.equal(t.brokers, three);
  assert.is(t.broker, three[0]!.address);
  assert.is(t.fingerprint, three[0]!.fingerprint);
  assert.ok(text.length < 2000, `${text.length} characters: an older reader takes up to 2,000`);
  // What an older mesh-host reads of it: b and f, a token it can still enrol with.
  const raw = JSON.parse(Buffer.from(text.slice('mesh1.'.length), 'base64url').toString('utf8'));
  assert.equal([raw.b, raw.f], [three[0]!.address, three[0]!.fingerprint]);
});

T('a token of one broker is written as before, without a list, and reads as a list of one', () => {
  const old =
    'mesh1.' +
    Buffer.from(
      JSON.stringify({ b: 'mq1:5671', f: fp('mq1'), v: 'v-1', n: 'web1', u: 'p.node.web1', s: 's', k: PIN }),
    ).toString('base64url');
  assert.equal(readToken(old).brokers, [{ address: 'mq1:5671', fingerprint: fp('mq1') }]);
  const one = writeToken({
    ...base,
    broker: 'mq1:5671',
    fingerprint: fp('mq1'),
    brokers: [{ address: 'mq1:5671', fingerprint: fp('mq1') }],
  });
  assert.not.ok('bs' in JSON.parse(Buffer.from(one.slice(6), 'base64url').toString('utf8')));
});

T('a malformed list is not a token: a bad address or fingerprint, an empty list, a first that is not b and f', () => {
  const token = (bs: unknown, b = 'mq1:5671', f = fp('mq1')) =>
    'mesh1.' +
    Buffer.from(JSON.stringify({ b, f, v: 'v', n: 'web1', u: 'u', s: 's', k: PIN, bs })).toString('base64url');
  for (const bs of [
    [],
    [
      { a: 'mq1:5671', f: fp('mq1') },
      { a: 'mq 2:5671', f: fp('mq2') },
    ],
    [
      { a: 'mq1:5671', f: fp('mq1') },
      { a: 'mq2:5671', f: fp('mq2').toLowerCase() },
    ],
    [
      { a: 'mq2:5671', f: fp('mq2') },
      { a: 'mq1:5671', f: fp('mq1') },
    ],
    'mq1:5671',
    [null],
  ]) {
    assert.throws(
      () => readToken(token(bs)),
      (e: unknown) => e instanceof MeshError && e.code === 'MSHF3',
      JSON.stringify(bs),
    );
  }
});

const R = suite('the brokers resource');
const res = (brokers: unknown, extra: Record<string, unknown> = {}) => [
  { id: 'brokers', kind: 'brokers', brokers, ...extra },
];
const malformed = (f: () => unknown, field: RegExp) =>
  assert.throws(f, (e: unknown) => e instanceof WireError && e.fault === 'malformed' && field.test(e.message));

R('a list of HOST:PORT and fingerprints parses as it came', () => {
  const list = three.map((b) => ({ address: b.address, fingerprint: b.fingerprint }));
  assert.equal(parseResources(res(list)), res(list));
});

R(
  'refused: an empty list (a node must keep a broker), a bad address or fingerprint, another id, a field it does not have',
  () => {
    malformed(() => parseResources(res([])), /resources\[0\]\.brokers must name at least one broker/);
    malformed(
      () => parseResources(res([{ address: 'mq1', fingerprint: fp('x') }])),
      /brokers\[0\]\.address must be HOST:PORT/,
    );
    malformed(
      () => parseResources(res([{ address: 'mq1:5671', fingerprint: fp('x').toLowerCase() }])),
      /brokers\[0\]\.fingerprint must be a SHA-256 fingerprint/,
    );
    malformed(
      () => parseResources([{ id: 'brokers:x', kind: 'brokers', brokers: three }]),
      /resources\[0\]\.id must be "brokers"/,
    );
    malformed(() => parseResources(res(three, { vhost: '/' })), /resources\[0\]\.vhost is not a field of this kind/);
  },
);

R('a module may not carry one: the mesh composes it (as MSH31), and the remedy is mesh broker add', () => {
  malformed(
    () => parseModuleEntries(res(three)),
    /resources\[0\]\.kind is composed by the mesh from the brokers it knows: .*mesh broker add/,
  );
});

T.run();
R.run();
