// Ed25519 over exact bytes. Nothing re-encodes between signing and checking:
// a difference in key order alone would have a node refuse a genuine message.
import { ed25519 } from '@noble/curves/ed25519.js';

export function sign(bytes: Uint8Array, secret: Uint8Array): Uint8Array {
  return ed25519.sign(bytes, secret);
}

export function verify(signature: Uint8Array, bytes: Uint8Array, publicKey: Uint8Array): boolean {
  try {
    return signature.length === 64 && ed25519.verify(signature, bytes, publicKey);
  } catch {
    return false;
  }
}
