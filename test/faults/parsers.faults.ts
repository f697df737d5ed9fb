// Hostile input to every parser that reads the wire or the disk. Each must
// answer with its own typed refusal: never a TypeError, never a crash, never
// a value it should not have accepted. Property-based, with fast-check.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { readEnrolRequest, writeEnrolRequest, readEnrolReply } from '../../src/wire/enrol.js';
import { readReport, writeReport } from '../../src/wire/report.js';
import { readDeclaration } from '../../src/wire/declaration.js';
import { parseResources } from '../../src/wire/parse_resources.js';
import { readToken, writeToken } from '../../src/wire/token.js';
import { MeshError } from '../../src/sys/errors.js';
import { nodeName, NODE_NAME } from '../../src/wire/names.js';
import { WireError, LIMITS, signEnvelope } from '../../src/wire/envelope.js';
import { KeyFormatError, nodeKeys, signingPair, b64 } from '../../src/crypto/keys.js';
import { open, SealError } from '../../src/crypto/seal.js';
import { envelope } from '../../src/assignment/declare.js';
import { bodyText, fresh } from '../../src/wire/declaration.js';
import { loadIdentity, IdentityFault } from '../../host/identity.js';
import { readState } from '../../host/apply/state.js';
import { readKept } from '../../host/keep.js';
import { checkPath } from '../../host/apply/paths.js';
import { RUNS, tally, say, summary } from './tally.js';

const signer = (() => {
  const k = signingPair();
  return { secret: k.secret, public: k.public, mesh: '0123456789abcdef' };
})();
const me = { mesh: signer.mesh, node: 'web1' };

/** Runs `f` on the input; it must return or throw one of `allowed`. Counts the case. */
function refusesCleanly(
  what: string,
  f: () => unknown,
  allowed: (new (...a: never[]) => Error)[],
): 'accepted' | 'refused' {
  tally.tried++;
  try {
    f();
    return 'accepted';
  } catch (err) {
    if (!allowed.some((c) => err instanceof c)) {
      throw new Error(`${what}: threw ${(err as Error)?.constructor?.name}: ${(err as Error)?.message}`);
    }
    tally.refused++;
    return 'refused';
  }
}

const hostileBytes = fc.oneof(
  fc.uint8Array({ maxLength: 2048 }),
  fc.string({ maxLength: 2048 }).map((s) => Buffer.from(s)),
  fc.jsonValue({ maxDepth: 6 }).map((v) => Buffer.from(JSON.stringify(v))),
  fc
    .record({
      v: fc.oneof(fc.constant(1), fc.anything()),
      body: fc.oneof(
        fc.string(),
        fc.jsonValue().map((j) => JSON.stringify(j)),
        fc.anything(),
      ),
      sig: fc.oneof(fc.base64String(), fc.anything()),
    })
    .map((v) => Buffer.from(JSON.stringify(v) ?? 'null')),
);

const P = suite('hostile input to every parser');

P('enrolment requests: random, truncated, flipped, wrong types', () => {
  const good = writeEnrolRequest('web1', 'secret', 'p'.repeat(43), nodeKeys());
  let refused = 0;
  fc.assert(
    fc.property(hostileBytes, (b) => {
      if (refusesCleanly('enrol', () => readEnrolRequest(b), [WireError]) === 'refused') refused++;
    }),
    { numRuns: RUNS },
  );
  fc.assert(
    fc.property(fc.nat(good.length - 1), (cut) => {
      refusesCleanly('enrol truncated', () => readEnrolRequest(good.subarray(0, cut)), [WireError]);
    }),
    { numRuns: Math.min(RUNS, good.length) },
  );
  fc.assert(
    fc.property(fc.nat(good.length - 1), fc.integer({ min: 1, max: 255 }), (i, x) => {
      const b = Buffer.from(good);
      b[i] = b[i]! ^ x;
      // A flipped byte either breaks the shape or the signature; it is never read as another valid request
      // unless the flip landed in JSON whitespace-equivalent bytes (none in compact JSON).
      const r = refusesCleanly('enrol flipped', () => readEnrolRequest(b), [WireError]);
      assert.is(r, 'refused');
    }),
    { numRuns: RUNS },
  );
  say(
    'enrolment request',
    `${RUNS * 2 + Math.min(RUNS, good.length)} inputs, ${refused} random ones refused, every truncation and flip refused`,
  );
});

P('reports, enrolment replies and tokens', () => {
  fc.assert(
    fc.property(hostileBytes, (b) => {
      refusesCleanly('report', () => readReport(b), [WireError]);
    }),
    { numRuns: RUNS },
  );
  fc.assert(
    fc.property(hostileBytes, (b) => {
      refusesCleanly('reply', () => readEnrolReply(b), [WireError, KeyFormatError]);
    }),
    { numRuns: RUNS },
  );
  fc.assert(
    fc.property(fc.string({ maxLength: 600 }), (s) => {
      refusesCleanly('token', () => readToken(s), [MeshError]);
    }),
    { numRuns: RUNS },
  );
  fc.assert(
    fc.property(fc.jsonValue(), (j) => {
      refusesCleanly('token json', () => readToken('mesh1.' + Buffer.from(JSON.stringify(j)).toString('base64url')), [
        MeshError,
      ]);
    }),
    { numRuns: RUNS },
  );
  // A token naming a node that would widen a pattern.
  assert.throws(
    () =>
      readToken(
        writeToken({
          broker: 'h:1',
          fingerprint: Array(32).fill('AA').join(':'),
          vhost: '/',
          node: 'a.*',
          user: 'x',
          secret: 's',
          pin: 'a'.repeat(64),
        }),
      ),
    (e: unknown) => e instanceof MeshError && e.code === 'MSHF2',
  );
  const ok = writeReport({ v: 1, serial: 3, held: [], failed: [], corrected: [], superseded: [] });
  assert.is(readReport(ok).serial, 3);
  say('reports/replies/tokens', `${RUNS * 4} inputs, each refused with its own error or read as what it is`);
});

P('declarations: random bytes, signed garbage, signed wrong shapes, unknown fields', () => {
  fc.assert(
    fc.property(hostileBytes, (b) => {
      assert.is(
        refusesCleanly('declaration', () => readDeclaration(b, signer.public, me), [WireError]),
        'refused',
      );
    }),
    { numRuns: RUNS },
  );
  // Signed by the right key but hostile inside: malformed, never applied.
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 5 }), (j) => {
      assert.is(
        refusesCleanly('signed junk', () => readDeclaration(envelope(JSON.stringify(j), signer), signer.public, me), [
          WireError,
        ]),
        'refused',
      );
    }),
    { numRuns: RUNS },
  );
  // Freshness is required: without an expiry a withheld declaration could be replayed forever.
  for (const drop of ['"signed":', '"expires":']) {
    const body = bodyText(signer.mesh, 'web1', 1, '[]', fresh()).replace(new RegExp(`${drop}\\d+,`), '');
    assert.ok(!body.includes(drop), body);
    assert.throws(
      () => readDeclaration(envelope(body, signer), signer.public, me),
      (e: unknown) =>
        e instanceof WireError &&
        e.fault === 'malformed' &&
        /declaration\.(signed|expires) must be/.test((e as Error).message),
    );
  }
  const backwards = bodyText(signer.mesh, 'web1', 1, '[]', { signed: 2_000_000_000, expires: 1_999_999_999 });
  assert.throws(
    () => readDeclaration(envelope(backwards, signer), signer.public, me),
    (e: unknown) => e instanceof WireError && /after declaration\.signed/.test((e as Error).message),
  );
  const extra = bodyText(signer.mesh, 'web1', 1, '[]', fresh()).replace('{', '{"exec":"rm -rf /",');
  assert.throws(
    () => readDeclaration(envelope(extra, signer), signer.public, me),
    (e: unknown) => e instanceof WireError && /not a field/.test((e as Error).message),
  );
  say('declarations', `${RUNS * 2 + 1} inputs, all refused before a byte was read as instruction`);
});

P('deeply nested and oversized messages are refused early', () => {
  const deep = Buffer.from('['.repeat(200_000) + ']'.repeat(200_000));
  for (const [name, f] of [
    ['enrol', () => readEnrolRequest(deep)],
    ['report', () => readReport(deep)],
    ['declaration', () => readDeclaration(deep, signer.public, me)],
  ] as const)
    assert.is(refusesCleanly(`deep ${name}`, f, [WireError]), 'refused');
  const deepSigned = envelope(
    '{"mesh":"0123456789abcdef","node":"web1","serial":1,"resources":' +
      '['.repeat(100_000) +
      ']'.repeat(100_000) +
      '}',
    signer,
  );
  assert.is(
    refusesCleanly('deep signed', () => readDeclaration(deepSigned, signer.public, me), [WireError]),
    'refused',
  );
  const big = Buffer.alloc(LIMITS.declaration + 1, 0x20);
  assert.throws(
    () => readDeclaration(big, signer.public, me),
    (e: unknown) => (e as WireError).fault === 'too-large',
  );
  assert.throws(
    () => readEnrolRequest(Buffer.alloc(LIMITS.message + 1, 0x20)),
    (e: unknown) => (e as WireError).fault === 'too-large',
  );
  tally.tried += 2;
  tally.refused += 2;
  say(
    'nesting and size',
    '200,000-deep JSON refused on every parser; one byte over each limit refused as too-large before parsing',
  );
});

P('resources: names that widen patterns and paths that escape', () => {
  const hostile = ['../etc/passwd', '/etc/../etc/passwd', '/srv/./x', '/srv//x', 'relative', '/srv/x/', '/srv/\0x', ''];
  for (const path of hostile) {
    assert.is(
      refusesCleanly(
        `path ${JSON.stringify(path)}`,
        () => parseResources([{ kind: 'file', id: `file:${path}`, path, content: '', mode: '0644' }]),
        [WireError],
      ),
      'refused',
      path,
    );
  }
  for (const name of ['a.*', 'x|y', 'A', '-a', 'a'.repeat(64), 'a b', 'é']) {
    assert.is(
      refusesCleanly(`name ${name}`, () => nodeName(name), [MeshError]),
      'refused',
      name,
    );
    assert.is(
      refusesCleanly(
        `service ${name}`,
        () => parseResources([{ kind: 'service', id: `service:${name}`, name, exec: ['/bin/true'] }]),
        [WireError],
      ),
      'refused',
    );
  }
  fc.assert(
    fc.property(fc.string({ maxLength: 80 }), (s) => {
      const r = refusesCleanly('name', () => nodeName(s), [MeshError]);
      assert.is(r === 'accepted', NODE_NAME.test(s));
    }),
    { numRuns: RUNS },
  );
  // The host's own check: only paths under a root pass, whatever the string.
  fc.assert(
    fc.property(fc.array(fc.constantFrom('srv', 'etc', '..', '.', '', 'x', 'passwd'), { maxLength: 6 }), (parts) => {
      const p = '/' + parts.join('/');
      const r = refusesCleanly('checkPath', () => checkPath(p, { roots: ['/srv'], stateDir: '/var/lib/mesh-host' }), [
        Error,
      ]);
      if (r === 'accepted')
        assert.ok(
          (p === '/srv' || p.startsWith('/srv/')) &&
            !parts.includes('..') &&
            !parts.includes('.') &&
            !parts.includes(''),
          p,
        );
    }),
    { numRuns: RUNS },
  );
  say(
    'names and paths',
    `${hostile.length} escaping paths, 7 widening names, ${RUNS * 2} random ones: none accepted that should not be`,
  );
});

P('the disk: kept declaration, state file and identity, tampered or random', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-faults-'));
  const keys = nodeKeys();
  const id = {
    v: 1 as const,
    name: 'web1',
    mesh: signer.mesh,
    signingKey: b64(signer.public),
    broker: { host: 'h', port: 1, vhost: '/', user: 'u', fingerprint: 'f' },
    brokers: [{ host: 'h', port: 1, fingerprint: 'f' }],
    password: 'p',
    keys: { identity: b64(keys.identity.secret), overlay: b64(keys.overlay.secret), sealing: b64(keys.sealing.secret) },
  };
  let n = 0;
  fc.assert(
    fc.property(hostileBytes, (b) => {
      const d = join(dir, String(n++));
      mkdirSync(d);
      writeFileSync(join(d, 'declaration.signed'), b);
      writeFileSync(join(d, 'identity.json'), b);
      assert.is(
        refusesCleanly('kept', () => readKept(d, id), [WireError]),
        'refused',
      );
      refusesCleanly('identity', () => loadIdentity(d), [IdentityFault]);
    }),
    { numRuns: Math.min(RUNS, 300) },
  );
  let states = 0;
  return (async () => {
    for (const text of ['', '{', '[]', '{"v":2}', '{"v":1,"resources":{}}', 'null', '\u0000\u0001']) {
      const d = join(dir, `s${states++}`);
      mkdirSync(d);
      writeFileSync(join(d, 'applied.json'), text);
      tally.tried++;
      await readState(d).then(
        () => assert.unreachable(`state ${JSON.stringify(text)} accepted`),
        (err: Error) => {
          assert.match(err.message, /applied\.json/, `state ${JSON.stringify(text)}: ${err.message}`);
          tally.refused++;
        },
      );
    }
    say('disk', `${Math.min(RUNS, 300)} kept/identity files and ${states} state files, each refused naming the file`);
  })();
});

P('sealed blobs: random or altered never open', () => {
  const k = nodeKeys();
  fc.assert(
    fc.property(fc.base64String({ maxLength: 400 }), (s) => {
      assert.is(
        refusesCleanly('sealed', () => open(s, k.sealing.secret), [SealError]),
        'refused',
      );
    }),
    { numRuns: RUNS },
  );
  say('sealed blobs', `${RUNS} random blobs, none opened`);
});

P.after(() => summary('parsers'));
P.run();
void signEnvelope;
