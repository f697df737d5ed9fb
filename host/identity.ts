// What a node keeps to come back on its own after any restart: its name, its
// keys, the broker's address and fingerprint, the signing key it believes and
// its own broker password. One 0600 file, written atomically, and only after
// the mesh said it knows this node (E4).
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../src/sys/atomic.js';
import { isObject } from '../src/wire/envelope.js';
import { HOST, isPort, isFingerprint } from '../src/wire/names.js';
import { key32 } from '../src/crypto/keys.js';
import { codeEntry, refuse, MeshError, type UnregisteredCode } from '../src/sys/errors.js';

export interface Identity {
  v: 1;
  name: string;
  mesh: string;
  /** base64 Ed25519 public key of the control plane. */
  signingKey: string;
  /** The broker this node enrolled through, and the vhost and account it uses on every broker. */
  broker: { host: string; port: number; vhost: string; user: string; fingerprint: string };
  /**
   * Every broker it may dial, each with the fingerprint it pins, tried in turn:
   * from the token, then from the mesh's brokers resource. An
   * identity from before the list loads with its one broker as the list.
   */
  brokers: BrokerAddress[];
  password: string;
  /** base64 secret halves. */
  keys: { identity: string; overlay: string; sealing: string };
}

export interface BrokerAddress {
  host: string;
  port: number;
  fingerprint: string;
}

function brokerAddress(v: unknown, at: string): BrokerAddress {
  if (
    !isObject(v) ||
    typeof v.host !== 'string' ||
    !HOST.test(v.host) ||
    !isPort(v.port) ||
    !isFingerprint(v.fingerprint)
  )
    throw new Error(`${at} is not a broker (host, port, fingerprint)`);
  return { host: v.host, port: v.port, fingerprint: v.fingerprint };
}

export const identityPath = (dir: string) => join(dir, 'identity.json');
export const overlayKeyPath = (dir: string) => join(dir, 'overlay.key');

/** L4's fault: an identity that exists and cannot be used; made from its refusal, so it says the code. */
export class IdentityFault extends MeshError {
  constructor(r: MeshError | UnregisteredCode) {
    const m = r as MeshError;
    super(codeEntry(m.code)!, m.said, m.remedy, m.cause);
    this.name = 'IdentityFault';
  }
}

/** null: not enrolled yet (a wait). An identity that exists and cannot be read is a fault (L4). */
export function loadIdentity(dir: string): Identity | null {
  let text: string;
  try {
    text = readFileSync(identityPath(dir), 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return null;
    throw new IdentityFault(
      refuse('MSHI5', `${identityPath(dir)} exists but cannot be read (${(err as Error).message})`, undefined, err),
    );
  }
  try {
    const v = JSON.parse(text) as Identity;
    if (!isObject(v) || v.v !== 1 || typeof v.name !== 'string' || !isObject(v.broker) || !isObject(v.keys))
      throw new Error('wrong shape');
    key32(v.signingKey, 'signingKey');
    key32(v.keys.identity, 'keys.identity');
    key32(v.keys.overlay, 'keys.overlay');
    key32(v.keys.sealing, 'keys.sealing');
    // Before the list: the one broker it enrolled through is the whole list.
    const list = (v as { brokers?: unknown }).brokers;
    if (list === undefined) v.brokers = [brokerAddress(v.broker, 'broker')];
    else if (!Array.isArray(list) || list.length === 0) throw new Error('brokers must list at least one broker');
    else v.brokers = list.map((b, i) => brokerAddress(b, `brokers[${i}]`));
    return v;
  } catch (err) {
    throw new IdentityFault(
      refuse('MSHI6', `${identityPath(dir)} is damaged (${(err as Error).message})`, undefined, err),
    );
  }
}

export async function saveIdentity(dir: string, id: Identity): Promise<void> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // The WireGuard key, on its own, for wg-quick's PostUp to read.
  await writeAtomic(overlayKeyPath(dir), id.keys.overlay + '\n', 0o600);
  await writeAtomic(identityPath(dir), JSON.stringify(id, null, 2), 0o600);
}

/**
 * Replace the list of brokers and nothing else (the vhost, account and
 * password stay): one atomic write of identity.json, 0600. Returns false when
 * the list was already this one.
 */
export async function saveBrokers(dir: string, brokers: BrokerAddress[]): Promise<boolean> {
  if (brokers.length === 0) throw new Error('a node must know at least one broker');
  const id = loadIdentity(dir);
  if (!id)
    throw new IdentityFault(
      refuse(
        'MSHK0',
        `${identityPath(dir)} does not exist: this machine is not enrolled, so it has no brokers to change`,
      ),
    );
  const want = brokers.map((b, i) => brokerAddress(b, `brokers[${i}]`));
  if (JSON.stringify(id.brokers) === JSON.stringify(want)) return false;
  await writeAtomic(identityPath(dir), JSON.stringify({ ...id, brokers: want }, null, 2), 0o600);
  return true;
}
