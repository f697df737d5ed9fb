// The keys a node makes at enrolment (docs/design.md, "The shape"), and the base64 form
// they travel and rest in.
import { ed25519, x25519 } from '@noble/curves/ed25519.js';

export interface KeyPair {
  secret: Uint8Array;
  public: Uint8Array;
}

export interface NodeKeys {
  /** Ed25519: signs what the node says about itself (a rekey, an enrolment). */
  identity: KeyPair;
  /** X25519: its WireGuard key; `wg pubkey` of the secret equals the public. */
  overlay: KeyPair;
  /** X25519: secrets are sealed to it. */
  sealing: KeyPair;
}

export function signingPair(): KeyPair {
  const { secretKey, publicKey } = ed25519.keygen();
  return { secret: secretKey, public: publicKey };
}

export function agreementPair(): KeyPair {
  const { secretKey, publicKey } = x25519.keygen();
  return { secret: secretKey, public: publicKey };
}

export function nodeKeys(): NodeKeys {
  return { identity: signingPair(), overlay: agreementPair(), sealing: agreementPair() };
}

export { signingPublic } from './sign.js';

export function agreementPublic(secret: Uint8Array): Uint8Array {
  return x25519.getPublicKey(secret);
}

export { b64 } from './base64.js';

export class KeyFormatError extends Error {}

/** A 32-byte key from base64, or an error naming what was expected. */
export function key32(value: unknown, what: string): Uint8Array {
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]{43}=$/.test(value)) {
    throw new KeyFormatError(`${what} is not a key: expected 32 bytes in base64 (44 characters).`);
  }
  return new Uint8Array(Buffer.from(value, 'base64'));
}
