// Sealing a secret to one node (S1): X25519 with a fresh ephemeral key, HKDF-SHA256
// over the shared point bound to both public keys, ChaCha20-Poly1305. Only the
// holder of the recipient's secret key can open it; the mesh keeps the blob and
// discards the plaintext.
import { x25519 } from '@noble/curves/ed25519.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const INFO = new TextEncoder().encode('mesh seal v1');
const VERSION = 1;

export class SealError extends Error {}

function derive(shared: Uint8Array, eph: Uint8Array, recipient: Uint8Array): Buffer {
  const salt = new Uint8Array(64);
  salt.set(eph, 0);
  salt.set(recipient, 32);
  return Buffer.from(hkdf(sha256, shared, salt, INFO, 32));
}

/** base64( version(1) | ephemeral public(32) | nonce(12) | ciphertext | tag(16) ) */
export function seal(plaintext: Uint8Array, recipientPublic: Uint8Array): string {
  const { secretKey, publicKey } = x25519.keygen();
  const key = derive(x25519.getSharedSecret(secretKey, recipientPublic), publicKey, recipientPublic);
  const nonce = randomBytes(12);
  const c = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
  const body = Buffer.concat([c.update(plaintext), c.final()]);
  return Buffer.concat([Buffer.from([VERSION]), publicKey, nonce, body, c.getAuthTag()]).toString('base64');
}

export function open(blob: string, recipientSecret: Uint8Array): Uint8Array {
  const raw = Buffer.from(blob, 'base64');
  if (raw.length < 1 + 32 + 12 + 16 || raw[0] !== VERSION)
    throw new SealError('not a sealed blob of this mesh (wrong length or version).');
  const eph = raw.subarray(1, 33);
  const nonce = raw.subarray(33, 45);
  const tag = raw.subarray(raw.length - 16);
  const body = raw.subarray(45, raw.length - 16);
  const recipient = x25519.getPublicKey(recipientSecret);
  const key = derive(x25519.getSharedSecret(recipientSecret, eph), eph, recipient);
  try {
    const d = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: 16 });
    d.setAuthTag(tag);
    return new Uint8Array(Buffer.concat([d.update(body), d.final()]));
  } catch (err) {
    throw new SealError('this blob was not sealed to this key, or it was altered.', { cause: err });
  }
}
