// The build messages and ref picking, without servers: what a builder will
// hand to git must never be read as an option or leave the clone.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readBuildRequest, readBuildNews, writeMessage } from '../../src/wire/build.js';
import { pickHead } from '../../src/catalogue/git_head.js';
import { readEnrolLine, writeEnrolLine } from '../../src/wire/builder_line.js';
import { loopback } from '../../src/builder/build_image.js';

const M = suite('build messages');
const id = '0b0e4a52-3c1f-4b7e-9a55-1b2c3d4e5f60';
const req = { v: 1, id, module: 'web', git: 'file:///srv/web.git', path: 'image', ref: 'main', track: 'main' };
const bytes = (v: unknown) => Buffer.from(JSON.stringify(v));

M('a request reads back as written', () => {
  assert.equal(readBuildRequest(writeMessage(req as never)), req);
});

M('refs, URLs and paths that git would read as options, or that leave the clone, are refused', () => {
  for (const bad of [
    { ref: '--upload-pack=touch /tmp/x' },
    { git: '--upload-pack=x' },
    { path: '../etc' },
    { path: 'a/../../b' },
    { path: '/abs' },
    { track: '-x' },
    { module: 'Web' },
    { id: 'x' },
  ]) {
    assert.throws(() => readBuildRequest(bytes({ ...req, ...bad })), /build request/, JSON.stringify(bad));
  }
});

M('a success must name commit, image and digest; a failure must say why', () => {
  assert.throws(
    () => readBuildNews(bytes({ v: 1, id, kind: 'result', ok: true, commit: 'a'.repeat(40) })),
    /must name commit, image and digest/,
  );
  assert.throws(() => readBuildNews(bytes({ v: 1, id, kind: 'result', ok: false })), /must say why/);
  assert.throws(
    () =>
      readBuildNews(
        bytes({ v: 1, id, kind: 'result', ok: true, commit: 'a'.repeat(40), image: 'r/x', digest: 'md5:00' }),
      ),
    /digest/,
  );
  const ok = {
    v: 1,
    id,
    kind: 'result',
    ok: true,
    commit: 'a'.repeat(40),
    image: '127.0.0.1:5000/web',
    digest: `sha256:${'b'.repeat(64)}`,
  };
  assert.equal(readBuildNews(bytes(ok)), {
    ...ok,
    head: undefined,
    headSeenAt: undefined,
    error: undefined,
    log: undefined,
  });
});

M('the source head is picked by ref: HEAD, a branch, a peeled tag, a commit id', () => {
  const a = 'a'.repeat(40),
    b = 'b'.repeat(40),
    c = 'c'.repeat(40),
    d = 'd'.repeat(40);
  const listing = `${a}\tHEAD\n${b}\trefs/heads/main\n${c}\trefs/tags/v1\n${d}\trefs/tags/v1^{}\n`;
  assert.is(pickHead(listing, 'HEAD'), a);
  assert.is(pickHead(listing, 'main'), b);
  assert.is(pickHead(listing, 'v1'), d, 'an annotated tag names the commit it points at');
  assert.is(pickHead(listing, 'e'.repeat(40)), 'e'.repeat(40));
  assert.is(pickHead(listing, 'nope'), undefined);
});

M('the enrol line round-trips and refuses anything else', () => {
  const l = {
    broker: '127.0.0.1:5671',
    fingerprint: Array(32).fill('AB').join(':'),
    vhost: '/',
    name: 'b1',
    user: 'builder.b1',
    password: 'p',
    requester: 'admin',
  };
  assert.equal(readEnrolLine(writeEnrolLine(l)), l);
  assert.throws(
    () => readEnrolLine('mesh1.' + writeEnrolLine(l).slice(7)),
    /not a builder enrolment line: .* \(MSHP0\)\.$/,
  );
});

M('plain HTTP to a registry only on loopback', () => {
  assert.ok(loopback('127.0.0.1:5000'));
  assert.ok(loopback('localhost:5000'));
  assert.not.ok(loopback('registry.example.org:5000'));
  assert.not.ok(loopback('127.0.0.1.example.org:5000'));
});

M.run();
