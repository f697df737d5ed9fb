// L4: a host without identity waits and says what it waits for; an identity
// that exists and cannot be read is a fault, never taken for "not enrolled
// yet" (a host that waited on a damaged file would sit there for ever, and
// one that enrolled again would take a second identity).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { loadIdentity, IdentityFault } from '../../host/identity.js';
import { waitForIdentity } from '../../host/wait.js';

const L4 = suite<{ dir: string }>('L4 no identity is a wait, a damaged one a fault');
L4.before.each((ctx) => {
  ctx.dir = mkdtempSync(join(tmpdir(), 'mesh-identity-'));
});
L4.after.each((ctx) => {
  rmSync(ctx.dir, { recursive: true, force: true });
});

L4('absent: null, and the wait says what it waits for', async ({ dir }) => {
  assert.is(loadIdentity(dir), null);
  const said: string[] = [];
  const stop = new AbortController();
  stop.abort();
  assert.is(await waitForIdentity(dir, (l) => said.push(l), 10, stop.signal), null);
  assert.equal(said, [
    `no identity yet (${join(dir, 'identity.json')}): waiting for this machine to be enrolled with \`mesh-host enrol <token>\``,
  ]);
});

for (const [what, text] of [
  ['not JSON', '{'],
  ['the wrong shape', '{"v":1}'],
  [
    'a key that is not one',
    JSON.stringify({ v: 1, name: 'web1', broker: {}, keys: { identity: 'x' }, signingKey: 'x' }),
  ],
] as const) {
  L4(`${what}: a fault naming the file and the remedy, and the wait does not wait`, async ({ dir }) => {
    writeFileSync(join(dir, 'identity.json'), text, { mode: 0o600 });
    assert.throws(
      () => loadIdentity(dir),
      (e: unknown) =>
        e instanceof IdentityFault && /identity\.json is damaged .*retire this node/.test((e as Error).message),
    );
    const said: string[] = [];
    await waitForIdentity(dir, (l) => said.push(l), 10).then(
      () => assert.unreachable('a damaged identity was waited on'),
      (e: unknown) => assert.ok(e instanceof IdentityFault),
    );
    assert.equal(said, [], 'not told as waiting');
  });
}

L4.run();
