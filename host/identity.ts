// What a node keeps to come back on its own after any restart: its name, its
// keys, the broker's address and fingerprint, the signing key it believes and
// its own broker password. One 0600 file, written atomically, and only after
// the mesh said it knows this node (E4).
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../src/sys/atomic.js';
import { isObject } from '../src/wire/envelope.js';
import { key32 } from '../src/crypto/keys.js';

export interface Identity {
  v: 1;
  name: string;
  mesh: string;
  /** base64 Ed25519 public key of the control plane. */
  signingKey: string;
  broker: { host: string; port: number; vhost: string; user: string; fingerprint: string };
  password: string;
  /** base64 secret halves. */
  keys: { identity: string; overlay: string; sealing: string };
}

export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MESH_HOST_DIR || '/var/lib/mesh-host';
}

export const identityPath = (dir: string) => join(dir, 'identity.json');
export const overlayKeyPath = (dir: string) => join(dir, 'overlay.key');

export class IdentityFault extends Error {}

/** null: not enrolled yet (a wait). An identity that exists and cannot be read is a fault (L4). */
export function loadIdentity(dir: string): Identity | null {
  let text: string;
  try {
    text = readFileSync(identityPath(dir), 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return null;
    throw new IdentityFault(`${identityPath(dir)} exists but cannot be read (${(err as Error).message}): fix its permissions, or retire this node and enrol it again.`, { cause: err });
  }
  try {
    const v = JSON.parse(text) as Identity;
    if (!isObject(v) || v.v !== 1 || typeof v.name !== 'string' || !isObject(v.broker) || !isObject(v.keys)) throw new Error('wrong shape');
    key32(v.signingKey, 'signingKey');
    key32(v.keys.identity, 'keys.identity');
    key32(v.keys.overlay, 'keys.overlay');
    key32(v.keys.sealing, 'keys.sealing');
    return v;
  } catch (err) {
    throw new IdentityFault(`${identityPath(dir)} is damaged (${(err as Error).message}): restore it from a backup, or retire this node (mesh node retire NAME) and enrol it again.`, { cause: err });
  }
}

export async function saveIdentity(dir: string, id: Identity): Promise<void> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The WireGuard key, on its own, for wg-quick's PostUp to read.
  await writeAtomic(overlayKeyPath(dir), id.keys.overlay + '\n', 0o600);
  await writeAtomic(identityPath(dir), JSON.stringify(id, null, 2), 0o600);
}
