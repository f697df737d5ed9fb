// Ed25519 over exact bytes. Nothing re-encodes between signing and checking:
// a difference in key order alone would have a node refuse a genuine message.
// Signing and checking go through node's OpenSSL (the same RFC 8032 signatures
// as @noble/curves, which makes the keys) at many times the rate: signing
// every declaration is a large part of what `mesh declare` spends.
import { createPrivateKey, createPublicKey, sign as osslSign, verify as osslVerify, type KeyObject } from 'node:crypto';

// DER prefixes of PKCS#8 and SPKI for a raw 32-byte Ed25519 key (RFC 8410).
const PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI = Buffer.from('302a300506032b6570032100', 'hex');

// A mesh signs with one key and a host checks with one: keep their key objects.
const cache = new Map<string, KeyObject>();
function keyObject(raw: Uint8Array, secret: boolean): KeyObject {
  if (raw.length !== 32)
    throw new Error(`an Ed25519 ${secret ? 'secret' : 'public'} key is 32 bytes, not ${raw.length}`);
  const id = (secret ? 's' : 'p') + Buffer.from(raw).toString('base64');
  let k = cache.get(id);
  if (!k) {
    const der = Buffer.concat([secret ? PKCS8 : SPKI, raw]);
    k = secret
      ? createPrivateKey({ key: der, format: 'der', type: 'pkcs8' })
      : createPublicKey({ key: der, format: 'der', type: 'spki' });
    if (cache.size > 64) cache.clear();
    cache.set(id, k);
  }
  return k;
}

export function sign(bytes: Uint8Array, secret: Uint8Array): Uint8Array {
  return osslSign(null, bytes, keyObject(secret, true));
}

export function verify(signature: Uint8Array, bytes: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return signature.length === 64 && osslVerify(null, bytes, keyObject(publicKey, false), signature);
  } catch {
    return false;
  }
}

/**
 * The public half of an Ed25519 secret, by OpenSSL as signing is: the same
 * RFC 8032 key as @noble/curves' getPublicKey (test/unit/signing_public), but
 * without loading @noble and building its tables, which every `mesh declare`
 * would pay at its start only to read the mesh's key.
 */
export function signingPublic(secret: Uint8Array): Uint8Array {
  return new Uint8Array(
    createPublicKey(keyObject(secret, true)).export({ format: 'der', type: 'spki' }).subarray(SPKI.length),
  );
}
