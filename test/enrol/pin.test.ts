// E6: the token pins the mesh's signing key. Whoever can publish to a node's
// queue (the broker's admin here, as a broker node or a hand-over file would
// be) answers an enrolment first with a welcome naming its own key: the host
// refuses it with its code and keeps nothing of it, and the mesh's own welcome,
// read after, still enrols it. A token issued before the pin is refused.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { held, freshMesh, spawnProc, MESH_HOST, type Mesh, type Proc } from '../harness/mesh.js';
import { connectBroker } from '../../src/broker/connect.js';
import { adminEndpoint } from '../../src/broker/admin.js';
import { publish } from '../../src/broker/publish.js';
import { queueOf } from '../../src/wire/names.js';
import { readToken, pinOf } from '../../src/wire/token.js';
import { b64, signingPair, signingPublic } from '../../src/crypto/keys.js';
import { loadIdentity } from '../../host/identity.js';
import { pendingPath } from '../../host/enrol_pending.js';

const P = suite<{ mesh: Mesh; serve: Proc }>('the token pins the signing key (E6)');
P.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
});
P.after(async (ctx) => {
  await ctx.mesh.stop();
});

/** Every file under DIR with its text. */
function files(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

P('the token carries the sha256 of the signing key, and the key the host keeps is that key', async ({ mesh }) => {
  const token = await mesh.token('pin0');
  assert.is(readToken(token).pin, pinOf(mesh.signer.public));
  const host = mesh.host('pin0');
  const r = await host.enrol(token);
  assert.is(r.code, 0, r.stderr);
  assert.is(loadIdentity(host.dir)!.signingKey, b64(mesh.signer.public));
});

P(
  'a welcome naming another key is refused with MSHU0 and nothing of it is kept; the real welcome still enrols',
  async ({ mesh, serve }) => {
    const token = await mesh.token('pin1');
    const host = mesh.host('pin1');
    const forger = signingPublic(signingPair().secret);
    const mark = serve.output().length;
    await held(serve, async () => {
      const p = spawnProc(process.execPath, [MESH_HOST, 'enrol'], host.env, token);
      await p.waitFor(/sent the enrolment request of pin1 through/);
      const { correlationId } = JSON.parse(readFileSync(pendingPath(host.dir), 'utf8')) as { correlationId: string };
      // The right mesh id, node and correlation id: only the key gives it away.
      const forged = { ok: true, mesh: mesh.signer.mesh, node: 'pin1', signingKey: b64(forger) };
      const conn = await connectBroker(adminEndpoint(mesh.broker), { name: 'a forger' });
      try {
        const ch = await conn.createConfirmChannel();
        await publish(ch, '', queueOf('pin1'), Buffer.from(JSON.stringify(forged)), {
          type: 'enrol-reply',
          correlationId,
          mandatory: true,
        });
      } finally {
        await conn.close().catch(() => {});
      }
      assert.is.not(await p.exited(), 0, p.output());
      const said = p
        .output()
        .match(
          /a welcome for pin1 named a signing key \(([A-Za-z0-9+/=]+)\) other than the one its token names: .*nothing of it was kept: .*\(MSHU0\)\./,
        );
      assert.ok(said, p.output());
      assert.is(said![1], b64(forger), 'the refusal names the key the welcome named');
      // Nothing kept: no identity, and only the pending file this machine wrote before it sent anything (its own
      // keys, so that the mesh's answer can still be read), with nothing of the forged welcome in it.
      assert.equal(Object.keys(files(host.dir)), ['enrolment.pending.json']);
      for (const text of Object.values(files(host.dir))) assert.not.ok(text.includes(b64(forger)), 'the forged key');
    });
    // The mesh answers the request it held: the same command again reads that welcome.
    await serve.waitFor(/enrol: pin1 enrolled/, 20_000, mark);
    const r = await host.enrol(token);
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stderr, /resuming the enrolment of pin1/);
    assert.is(loadIdentity(host.dir)!.signingKey, b64(mesh.signer.public));
  },
);

P('a token issued without the pin is refused with MSHU1 and the remedy, and nothing is kept', async ({ mesh }) => {
  const raw = JSON.parse(Buffer.from((await mesh.token('pin2')).slice('mesh1.'.length), 'base64url').toString('utf8'));
  assert.is(raw.k, pinOf(mesh.signer.public), 'the field an older token lacks');
  delete raw.k;
  const old = 'mesh1.' + Buffer.from(JSON.stringify(raw)).toString('base64url');
  const host = mesh.host('pin2');
  const r = await host.enrol(old);
  assert.is(r.code, 1, r.stderr);
  assert.is(
    r.stderr,
    "mesh-host: this token does not name the mesh's signing key (it was issued by an older mesh): issue a new one on the control plane: mesh token issue pin2 (MSHU1).\n",
  );
  assert.equal(readdirSync(host.dir), [], 'nothing kept');
  assert.not.ok(existsSync(pendingPath(host.dir)));
});

P.run();
