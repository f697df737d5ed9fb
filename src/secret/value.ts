// A made secret (S1): 32 random bytes, written as base64url text so it can be
// a password as it stands, sealed once per holder and then wiped. The plaintext
// lives only in this process, only between making and sealing.
import { randomBytes } from 'node:crypto';
import { seal } from '../crypto/seal.js';

export interface Holder {
  node: string;
  sealingKey: string; /* hex */
}
export interface Sealed {
  holders: string[];
  keys: string[];
  blobs: string[];
}

/** Make a new value and seal it to every holder; the value is wiped before returning. */
export function makeSealed(holders: Holder[]): Sealed {
  const value = Buffer.from(randomBytes(32).toString('base64url'), 'utf8');
  try {
    return sealTo(value, holders);
  } finally {
    value.fill(0);
  }
}

/** Seal a value handed over by a person (an accepted secret) to every holder. */
export function sealTo(value: Uint8Array, holders: Holder[]): Sealed {
  return {
    holders: holders.map((h) => h.node),
    keys: holders.map((h) => h.sealingKey),
    blobs: holders.map((h) => seal(value, new Uint8Array(Buffer.from(h.sealingKey, 'hex')))),
  };
}
