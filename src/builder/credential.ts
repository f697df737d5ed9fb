// What a build machine keeps: its broker account and password, where the
// broker is and its fingerprint, and whose requests it builds. One 0600 file,
// written atomically, like a host's identity. Nothing else: a builder holds
// its own credential and no other.
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../sys/atomic.js';
import { isObject } from '../wire/envelope.js';
import { refuse } from '../sys/errors.js';

export interface Credential {
  v: 1;
  name: string;
  broker: { host: string; port: number; vhost: string; user: string; fingerprint: string };
  password: string;
  /** The control plane's account: only requests carrying it as user_id are built. */
  requester: string;
}

export function builderDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MESH_BUILDER_DIR || '/var/lib/mesh-builder';
}

export const credentialPath = (dir: string) => join(dir, 'credential.json');

/** null: not enrolled. A file that exists and cannot be read is a fault, not a wait. */
export function loadCredential(dir: string): Credential | null {
  let text: string;
  try {
    text = readFileSync(credentialPath(dir), 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return null;
    throw refuse(
      'MSHP4',
      `${credentialPath(dir)} exists but cannot be read (${(err as Error).message})`,
      undefined,
      err,
    );
  }
  try {
    const v = JSON.parse(text) as Credential;
    if (
      !isObject(v) ||
      v.v !== 1 ||
      typeof v.name !== 'string' ||
      !isObject(v.broker) ||
      typeof v.password !== 'string' ||
      typeof v.requester !== 'string'
    )
      throw new Error('wrong shape');
    return v;
  } catch (err) {
    throw refuse('MSHP5', `${credentialPath(dir)} is damaged (${(err as Error).message})`, undefined, err);
  }
}

export async function saveCredential(dir: string, c: Credential): Promise<void> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  await writeAtomic(credentialPath(dir), JSON.stringify(c, null, 2), 0o600);
}
