// D1 with codes: every message a host or mesh serve refuses is refused with
// its fault kind (what the report says, forged apart from malformed) and a
// code of the register beside it, from the bytes as they arrive. The host's
// own refusals of genuine messages (replayed D2, stale C2) are in
// test/declare/loop.test.ts and test/faults/live.faults.ts, through a real host.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { WireError, LIMITS, signEnvelope, signText } from '../../src/wire/envelope.js';
import { readDeclaration, bodyText, fresh } from '../../src/wire/declaration.js';
import { readLastReport, writeLastReport } from '../../src/wire/last_report.js';
import { readReport, writeReport, REFUSAL_FAULTS, type Report } from '../../src/wire/report.js';
import { readRekey, readRekeyReply } from '../../src/wire/rekey.js';
import { readBuildRequest, readBuildNews } from '../../src/wire/build.js';
import { readBuilderEnrol } from '../../src/wire/builder_line.js';
import { readEnrolReply } from '../../src/wire/enrol.js';
import { signingPair } from '../../src/crypto/keys.js';
import { codeEntry, MeshError } from '../../src/sys/errors.js';

const W = suite('the wire refuses with a fault kind and a code');

const signer = signingPair();
const other = signingPair();
const me = { mesh: '0123456789abcdef', node: 'web1' };
const KEY = Buffer.alloc(32, 7).toString('base64');
const decl = (node = me.node, mesh = me.mesh, resources = '[]') => bodyText(mesh, node, 7, resources, fresh());

// [what arrives, how it is read, its fault, its code]
const CASES: [string, () => unknown, string, string][] = [
  [
    'a declaration that is not JSON',
    () => readDeclaration(Buffer.from('{not json'), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  [
    'a declaration that is no envelope',
    () => readDeclaration(Buffer.from('{"v":2}'), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  [
    'a declaration of the wrong shape',
    () => readDeclaration(signText(decl().replace('"serial":7', '"serial":0'), signer.secret), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  [
    // Genuinely signed, yet its body is no object: read as malformed, never as a TypeError of the reader.
    'a signed declaration whose body is null',
    () => readDeclaration(signText('null', signer.secret), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  [
    'a signed declaration whose body is a number',
    () => readDeclaration(signText('7', signer.secret), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  [
    // The password a builder chooses replaces its line's: one weaker than a node's is never taken (B3).
    'a builder enrolment whose password is short',
    () => readBuilderEnrol(Buffer.from(JSON.stringify({ v: 1, password: 'short' }))),
    'malformed',
    'MSHN0',
  ],
  [
    'a builder enrolment with no password',
    () => readBuilderEnrol(Buffer.from(JSON.stringify({ v: 1 }))),
    'malformed',
    'MSHN0',
  ],
  [
    'a genuine declaration with a field no declaration has',
    () =>
      readDeclaration(signText(decl().replace('"serial":7', '"serial":7,"extra":1'), signer.secret), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  [
    'a genuine declaration whose mesh is no mesh id',
    () => readDeclaration(signText(decl(me.node, 'NOT-A-MESH-ID'), signer.secret), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  [
    'a genuine declaration signed at no time',
    () => readDeclaration(signText(decl().replace(/"signed":\d+/, '"signed":0'), signer.secret), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  [
    'a genuine declaration expiring before it was signed',
    () => readDeclaration(signText(decl().replace(/"expires":\d+/, '"expires":1'), signer.secret), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  [
    'a genuine declaration whose node is no node name',
    () => readDeclaration(signText(decl('Web_1'), signer.secret), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  [
    'a last report whose packages are no digest',
    () =>
      readLastReport(
        signEnvelope({ ...me, held: null, reportedAt: null, floor: null, packages: 'nope' }, signer.secret),
        signer.public,
        me,
      ),
    'malformed',
    'MSHN0',
  ],
  [
    'a last report whose held list is no list',
    () =>
      readLastReport(
        signEnvelope({ ...me, held: 'all', reportedAt: null, floor: null }, signer.secret),
        signer.public,
        me,
      ),
    'malformed',
    'MSHN0',
  ],
  [
    'a rekey whose keys are not keys',
    () =>
      readRekey(
        signEnvelope({ v: 1, kind: 'rekey', node: 'web1', left: 'x', taken: 'y', tunnel: 'mesh0' }, other.secret),
      ),
    'malformed',
    'MSHN0',
  ],
  // A welcome without the mesh's signing key would leave the host nothing to verify with.
  [
    'an enrolment reply of neither kind',
    () => readEnrolReply(Buffer.from('{"ok":true,"mesh":"m"}')),
    'malformed',
    'MSHN0',
  ],
  [
    // Every other field well formed: only the rekey's own shape is wrong.
    'a rekey naming a tunnel that is no interface name',
    () =>
      readRekey(
        signEnvelope(
          { v: 1, kind: 'rekey', node: 'web1', left: KEY, taken: KEY, tunnel: 'mesh0; ip link del' },
          other.secret,
        ),
      ),
    'malformed',
    'MSHN0',
  ],
  ['a rekey reply of neither kind', () => readRekeyReply(Buffer.from('{"ok":"maybe"}')), 'malformed', 'MSHN0'],
  ['build news over the limit', () => readBuildNews(Buffer.alloc(LIMITS.message + 1, 0x20)), 'too-large', 'MSHN2'],
  ['a builder enrolment over its limit', () => readBuilderEnrol(Buffer.alloc(1001, 0x20)), 'too-large', 'MSHN2'],
  [
    'a declaration carrying a resource the host cannot read',
    () =>
      readDeclaration(
        signText(
          decl(me.node, me.mesh, '[{"kind":"file","id":"file:/x/../y","path":"/x/../y","content":"","mode":"0644"}]'),
          signer.secret,
        ),
        signer.public,
        me,
      ),
    'malformed',
    'MSHN0',
  ],
  [
    'a declaration over the limit',
    () => readDeclaration(Buffer.alloc(LIMITS.declaration + 1, 0x20), signer.public, me),
    'too-large',
    'MSHN2',
  ],
  [
    'a declaration signed by another key',
    () => readDeclaration(signText(decl(), other.secret), signer.public, me),
    'forged',
    'MSHN1',
  ],
  [
    'a declaration whose signature is not 64 bytes',
    () => readDeclaration(Buffer.from(JSON.stringify({ v: 1, body: decl(), sig: 'AAAA' })), signer.public, me),
    'forged',
    'MSHN1',
  ],
  [
    // One signature, one spelling: the same 64 bytes without their padding would be another envelope's bytes.
    'a genuine declaration whose signature is spelled another way',
    () => {
      const env = JSON.parse(Buffer.from(signText(decl(), signer.secret)).toString()) as { sig: string };
      const sig = env.sig.replace(/=+$/, '');
      assert.is.not(sig, env.sig);
      return readDeclaration(Buffer.from(JSON.stringify({ ...env, sig })), signer.public, me);
    },
    'forged',
    'MSHN1',
  ],
  [
    'a genuine declaration for another node',
    () => readDeclaration(signText(decl('web2'), signer.secret), signer.public, me),
    'forged',
    'MSHN4',
  ],
  [
    'a genuine declaration for another mesh',
    () => readDeclaration(signText(decl(me.node, 'fedcba9876543210'), signer.secret), signer.public, me),
    'forged',
    'MSHN4',
  ],
  [
    'a last report for another node',
    () =>
      readLastReport(
        writeLastReport({ ...me, node: 'web2', held: null, reportedAt: null, floor: null }, signer.secret),
        signer.public,
        me,
      ),
    'forged',
    'MSHN4',
  ],
  [
    'a last report signed by another key',
    () =>
      readLastReport(
        writeLastReport({ ...me, held: null, reportedAt: null, floor: null }, other.secret),
        signer.public,
        me,
      ),
    'forged',
    'MSHN1',
  ],
  [
    'a last report without its floor',
    () => readLastReport(signEnvelope({ ...me, held: null, reportedAt: null }, signer.secret), signer.public, me),
    'malformed',
    'MSHN0',
  ],
  ['a report over the limit', () => readReport(Buffer.alloc(LIMITS.declaration + 1, 0x20)), 'too-large', 'MSHN2'],
  ['a report of the wrong shape', () => readReport(Buffer.from('{"v":1,"serial":"x"}')), 'malformed', 'MSHN0'],
  [
    'a report of a refusal of no kind the mesh knows (forged, malformed, replayed, stale)',
    () =>
      readReport(
        writeReport({
          v: 1,
          serial: 0,
          held: [],
          failed: [],
          corrected: [],
          superseded: [],
          refused: { serial: 3, fault: 'suspicious' as never, reason: 'x' },
        }),
      ),
    'malformed',
    'MSHN0',
  ],
  [
    'a report naming an agent version that is not MAJOR.MINOR.PATCH',
    () =>
      readReport(
        writeReport({ v: 1, serial: 0, held: [], failed: [], corrected: [], superseded: [], agent: '0.1; drop table' }),
      ),
    'malformed',
    'MSHN0',
  ],
  [
    'a rekey of the wrong shape',
    () => readRekey(signEnvelope({ v: 1, kind: 'rekey' }, other.secret)),
    'malformed',
    'MSHN0',
  ],
  [
    'a build request over the limit',
    () => readBuildRequest(Buffer.alloc(LIMITS.message + 1, 0x20)),
    'too-large',
    'MSHN2',
  ],
  ['a build request of the wrong shape', () => readBuildRequest(Buffer.from('{"v":1,"id":"x"}')), 'malformed', 'MSHN0'],
  ['build news of the wrong shape', () => readBuildNews(Buffer.from('[]')), 'malformed', 'MSHN0'],
];

for (const [what, read, fault, code] of CASES) {
  W(`${what} is refused as ${fault}, with ${code}`, () => {
    try {
      read();
    } catch (err) {
      assert.instance(err, WireError, String(err));
      assert.is((err as WireError).fault, fault);
      assert.is((err as WireError).code, code, (err as Error).message);
      assert.ok((err as Error).message.endsWith(`: ${codeEntry(code)!.remedy} (${code}).`), (err as Error).message);
      return;
    }
    assert.unreachable(`${what} was read`);
  });
}

W(
  'a WireError is a refusal like any other (a MeshError: its code, the wire context, the remedy) and keeps what it said',
  () => {
    const e = new WireError('forged', 'rekey from a1 is not signed by its identity key.');
    assert.instance(e, MeshError);
    assert.is(e.context, 'wire');
    assert.is(e.said, 'rekey from a1 is not signed by its identity key');
    assert.is(e.message, `rekey from a1 is not signed by its identity key: ${codeEntry('MSHN1')!.remedy} (MSHN1).`);
    // The call shape of before the codes still makes one: the fault's.
    assert.is(new WireError('malformed', 'x').code, 'MSHN0');
    assert.is(new WireError('too-large', 'x').code, 'MSHN2');
    assert.is(new WireError('stale', 'x').code, 'MSHN3');
    assert.is(new WireError('replayed', 'x').code, 'MSHN5');
  },
);

W('a report of each refusal kind is read as it was written: replayed among them, apart from forged', () => {
  for (const fault of REFUSAL_FAULTS) {
    const r: Report = {
      v: 1,
      serial: 0,
      held: [],
      failed: [],
      corrected: [],
      superseded: [],
      refused: { serial: 3, fault, reason: 'x' },
    };
    assert.equal(readReport(writeReport(r)).refused, r.refused);
  }
  assert.equal([...REFUSAL_FAULTS].sort(), ['forged', 'malformed', 'replayed', 'stale']);
});

W('a report names the version of the agent that sent it, and is read with it (V1)', () => {
  const r: Report = { v: 1, serial: 4, held: [], failed: [], corrected: [], superseded: [], agent: '0.12.3-rc.1' };
  assert.is(readReport(writeReport(r)).agent, '0.12.3-rc.1');
  const { agent: _, ...none } = r;
  assert.is(
    readReport(writeReport(none)).agent,
    undefined,
    'an agent from before versions were reported still reports',
  );
});

W.run();
