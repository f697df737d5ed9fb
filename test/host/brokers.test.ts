// A host applying the brokers resource: identity.json's list is
// rewritten, atomically and 0600, keeping the vhost, the account and the
// password; a declaration without it leaves the list as it was (a node is
// never stranded); a hand-edited list is put back (D6); and an identity from
// before the list still loads, its one broker the whole list.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, statSync, writeFileSync, chmodSync } from 'node:fs';
import { randomBytes, createHash } from 'node:crypto';
import { apply, reconcile } from '../../host/apply/engine.js';
import { loadIdentity, saveIdentity, identityPath, type Identity } from '../../host/identity.js';
import type { BrokersResource } from '../../src/wire/resources.js';
import { sandbox, file, type Sandbox } from './helpers.js';

const fp = (seed: string) => createHash('sha256').update(seed).digest('hex').toUpperCase().match(/../g)!.join(':');
const key = () => randomBytes(32).toString('base64');

const H = suite<{ sb: Sandbox; id: Identity }>('a host applies its brokers');
H.before.each(async (ctx) => {
  ctx.sb = await sandbox();
  ctx.id = {
    v: 1,
    name: 'web1',
    mesh: '0123456789abcdef',
    signingKey: key(),
    broker: { host: 'mq1.example.net', port: 5671, vhost: 'v-1', user: 'p.node.web1', fingerprint: fp('mq1') },
    brokers: [{ host: 'mq1.example.net', port: 5671, fingerprint: fp('mq1') }],
    password: 'the-password',
    keys: { identity: key(), overlay: key(), sealing: key() },
  };
  await saveIdentity(ctx.sb.stateDir, ctx.id);
});

const brokers = (...list: [string, string][]): BrokersResource => ({
  id: 'brokers',
  kind: 'brokers',
  brokers: list.map(([address, seed]) => ({ address, fingerprint: fp(seed) })),
});

H('applied: the list is rewritten, 0600, and everything else in the identity is as it was', async ({ sb, id }) => {
  const r = await apply(
    [brokers(['mq1.example.net:5671', 'mq1'], ['mq2.example.net:5672', 'mq2'])],
    'declared',
    sb.opts,
  );
  assert.equal(r.failed, []);
  assert.equal(r.changed, ['brokers']);
  const now = loadIdentity(sb.stateDir)!;
  assert.equal(now.brokers, [
    { host: 'mq1.example.net', port: 5671, fingerprint: fp('mq1') },
    { host: 'mq2.example.net', port: 5672, fingerprint: fp('mq2') },
  ]);
  assert.equal({ ...now, brokers: id.brokers }, id, 'vhost, account, password and keys kept');
  assert.is(statSync(identityPath(sb.stateDir)).mode & 0o777, 0o600);
  assert.ok(
    sb.logs.some((l) =>
      /now lists mq1\.example\.net:5671, mq2\.example\.net:5672; the link dials them from its next attempt/.test(l),
    ),
    sb.logs.join('\n'),
  );
  // The same list again changes nothing.
  const again = await apply(
    [brokers(['mq1.example.net:5671', 'mq1'], ['mq2.example.net:5672', 'mq2'])],
    'declared',
    sb.opts,
  );
  assert.equal(again.changed, []);
});

H('a later declaration without it leaves the list as it is: a node is never left without a broker', async ({ sb }) => {
  await apply([brokers(['mq2.example.net:5671', 'mq2'])], 'declared', sb.opts);
  const r = await apply([file(`${sb.root}/x`, 'x')], 'declared', sb.opts);
  assert.equal(r.removed, ['brokers']);
  assert.equal(r.failed, []);
  assert.equal(loadIdentity(sb.stateDir)!.brokers, [{ host: 'mq2.example.net', port: 5671, fingerprint: fp('mq2') }]);
});

H('D6: a hand-edited list is put back by the reconcile', async ({ sb }) => {
  const decl = [brokers(['mq1.example.net:5671', 'mq1'], ['mq2.example.net:5671', 'mq2'])];
  await apply(decl, 'declared', sb.opts);
  const text = JSON.parse(readFileSync(identityPath(sb.stateDir), 'utf8'));
  writeFileSync(identityPath(sb.stateDir), JSON.stringify({ ...text, brokers: [text.brokers[0]] }), { mode: 0o600 });
  const r = await reconcile(decl, 'declared', sb.opts);
  assert.equal(r.corrected, ['brokers']);
  assert.is(loadIdentity(sb.stateDir)!.brokers.length, 2);
});

H(
  'an identity from before the list loads with its one broker as the list, and takes a list when one is applied',
  async ({ sb, id }) => {
    const { brokers: _gone, ...old } = id;
    writeFileSync(identityPath(sb.stateDir), JSON.stringify(old), { mode: 0o600 });
    chmodSync(identityPath(sb.stateDir), 0o600);
    assert.equal(loadIdentity(sb.stateDir)!.brokers, [{ host: 'mq1.example.net', port: 5671, fingerprint: fp('mq1') }]);
    await apply([brokers(['mq1.example.net:5671', 'mq1'], ['mq3.example.net:5671', 'mq3'])], 'declared', sb.opts);
    const saved = JSON.parse(readFileSync(identityPath(sb.stateDir), 'utf8'));
    assert.is(saved.brokers.length, 2);
    assert.equal(saved.broker, old.broker, 'the broker it enrolled through, its vhost and account, kept');
  },
);

H('a damaged list is a fault of the identity, never read as "no brokers"', async ({ sb, id }) => {
  for (const bad of [
    [],
    [{ host: 'mq1', port: 0, fingerprint: fp('x') }],
    [{ host: 'mq1', port: 5671, fingerprint: 'nope' }],
    'mq1:5671',
  ]) {
    writeFileSync(identityPath(sb.stateDir), JSON.stringify({ ...id, brokers: bad }), { mode: 0o600 });
    assert.throws(() => loadIdentity(sb.stateDir), /identity\.json is damaged/, JSON.stringify(bad));
  }
});

H.run();
