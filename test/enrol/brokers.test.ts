// Enrolment with several brokers: `mesh token issue` writes every
// broker the mesh knows into the token; `mesh-host enrol` tries them in turn
// (one down is passed over) and the identity it keeps lists them all; a token
// none of whose brokers answers is refused with each one's reason.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { readToken, writeToken } from '../../src/wire/token.js';
import { loadIdentity } from '../../host/identity.js';
import { freePort } from '../harness/ports.js';
import { createServer, type Server } from 'node:net';

const E = suite<{ mesh: Mesh; serve: Proc; dead: string }>("enrolment tries the token's brokers in turn");
const fp = (seed: string) => createHash('sha256').update(seed).digest('hex').toUpperCase().match(/../g)!.join(':');

E.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  // Nothing listens there; "127.0.0.1:1…" sorts before the home's address, so it is tried first.
  ctx.dead = `127.0.0.1:1${String(await freePort()).slice(0, 3)}`;
});
E.after(async (ctx) => {
  await ctx.mesh?.stop();
});

E(
  'a token lists every broker; enrol passes over the one down and the identity keeps them all',
  async ({ mesh, dead }) => {
    const add = await mesh.cli(['broker', 'add', dead, '--fingerprint', fp('dead')]);
    assert.is(add.code, 0, add.stderr);
    const token = await mesh.token('web1');
    const t = readToken(token);
    const home = mesh.broker.public;
    assert.equal(t.brokers, [
      { address: dead, fingerprint: fp('dead') },
      { address: home, fingerprint: mesh.broker.fingerprint },
    ]);
    const host = mesh.host('web1');
    const r = await host.enrol(token);
    assert.is(r.code, 0, r.stderr);
    const id = loadIdentity(host.dir)!;
    assert.equal(
      id.brokers.map((b) => `${b.host}:${b.port}`),
      [dead, home],
    );
    assert.is(`${id.broker.host}:${id.broker.port}`, home, 'the broker it enrolled through');
    const proc = host.run();
    await proc.waitFor(new RegExp(`connected to ${home.replace(/\./g, '\\.')}`), 30_000);
    await proc.stop();
  },
);

E(
  'no broker of the token answers: refused, each broker said with its reason, and no identity kept',
  async ({ mesh, dead }) => {
    const t = readToken(await mesh.token('web2'));
    const other = `127.0.0.1:${await freePort()}`;
    const token = writeToken({
      ...t,
      broker: dead,
      fingerprint: fp('dead'),
      brokers: [
        { address: dead, fingerprint: fp('dead') },
        { address: other, fingerprint: fp('other') },
      ],
    });
    const host = mesh.host('web2');
    const r = await host.enrol(token);
    assert.is(r.code, 1);
    assert.match(r.stderr, new RegExp(`no broker of this token answered: ${dead}: .+; ${other}: .+\\(MSHI0\\)\\.`));
    assert.is(loadIdentity(host.dir), null);
  },
);

E('a refused account stops at once: the next broker of the token is never dialled', async ({ mesh }) => {
  const token = await mesh.token('web3');
  assert.is((await mesh.host('web3').enrol(token)).code, 0);
  // The spent token again, its home broker first and then a listener that counts who dials it.
  let dialled = 0;
  const counter: Server = createServer((s) => {
    dialled++;
    s.destroy();
  });
  await new Promise<void>((r) => counter.listen(0, '127.0.0.1', r));
  try {
    const t = readToken(token);
    const other = `127.0.0.1:${(counter.address() as { port: number }).port}`;
    const again = writeToken({
      ...t,
      broker: mesh.broker.public,
      fingerprint: mesh.broker.fingerprint,
      brokers: [
        { address: mesh.broker.public, fingerprint: mesh.broker.fingerprint },
        { address: other, fingerprint: fp('other') },
      ],
    });
    const host = mesh.host('web3');
    const r = await host.enrol(again);
    assert.is(r.code, 1);
    assert.match(r.stderr, /the broker refused this token's account \(web3\).*\(MSHG9\)\./, r.stderr);
    assert.is(dialled, 0, 'the broker after the one that refused the account');
    assert.is(loadIdentity(host.dir), null);
  } finally {
    await new Promise((r) => counter.close(r));
  }
});

E.run();
