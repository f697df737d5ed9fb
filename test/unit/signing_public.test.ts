// The mesh's public key is derived by OpenSSL (src/crypto/sign.ts) where keys
// are made by @noble/curves: the two must give the same key for every secret,
// or the mesh id (a hash of it) and every host's pinned signing key would
// change under a mesh that merely read its own key file.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { ed25519 } from '@noble/curves/ed25519.js';
import { signingPublic, sign, verify } from '../../src/crypto/sign.js';
import { signingPair } from '../../src/crypto/keys.js';

const K = suite('the public half of a signing key');

K('OpenSSL derives the public key @noble/curves derives, for 200 random secrets', () => {
  for (let i = 0; i < 200; i++) {
    const secret = new Uint8Array(randomBytes(32));
    assert.equal(
      Buffer.from(signingPublic(secret)).toString('hex'),
      Buffer.from(ed25519.getPublicKey(secret)).toString('hex'),
    );
  }
});

K('a pair @noble makes verifies against the key OpenSSL derives', () => {
  const p = signingPair();
  assert.equal([...signingPublic(p.secret)], [...p.public]);
  const bytes = Buffer.from('a declaration');
  assert.ok(verify(sign(bytes, p.secret), bytes, signingPublic(p.secret)));
});

K.run();
