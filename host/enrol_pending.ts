// The enrolment mesh-host keeps before it sends anything (host/enrol.ts):
// its keys and chosen broker password, in MESH_HOST_DIR, 0600, written
// atomically. Resumed by the same token, replaced (and said) by another;
// a file that cannot be read is refused (MSHK6), never replaced.
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Token } from '../src/wire/token.js';
import { isObject } from '../src/wire/envelope.js';
import { b64, key32, signingPublic, agreementPublic, nodeKeys, type NodeKeys } from '../src/crypto/keys.js';
import { writeAtomic } from '../src/sys/atomic.js';
import { refuse } from '../src/sys/errors.js';

/**
 * What mesh-host sent and must be able to send again: the token it spends (its
 * node and the SHA-256 of its secret, never the secret), the three secret keys,
 * the broker password it chose and the request's correlation id (so an answer
 * to an earlier run is read as this one's). 0600, written atomically.
 */
export interface Pending {
  v: 1;
  node: string;
  tokenHash: string;
  correlationId: string;
  password: string;
  keys: { identity: string; overlay: string; sealing: string };
}

export const pendingPath = (dir: string) => join(dir, 'enrolment.pending.json');

const tokenHash = (t: Token) => createHash('sha256').update(t.secret).digest('hex');

/** The pending file, null when there is none, or why it cannot be read. */
function loadPending(dir: string): { pending: Pending | null; damaged?: string } {
  let text: string;
  try {
    text = readFileSync(pendingPath(dir), 'utf8');
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return { pending: null };
    return { pending: null, damaged: (err as Error).message };
  }
  try {
    const v = JSON.parse(text) as Pending;
    if (
      !isObject(v) ||
      v.v !== 1 ||
      typeof v.node !== 'string' ||
      typeof v.tokenHash !== 'string' ||
      typeof v.correlationId !== 'string' ||
      typeof v.password !== 'string' ||
      !isObject(v.keys)
    )
      throw new Error('wrong shape');
    for (const k of ['identity', 'overlay', 'sealing'] as const) key32(v.keys[k], `keys.${k}`);
    return { pending: v };
  } catch (err) {
    return { pending: null, damaged: (err as Error).message };
  }
}

export function keysOf(p: Pending): NodeKeys {
  const identity = key32(p.keys.identity, 'keys.identity');
  const overlay = key32(p.keys.overlay, 'keys.overlay');
  const sealing = key32(p.keys.sealing, 'keys.sealing');
  return {
    identity: { secret: identity, public: signingPublic(identity) },
    overlay: { secret: overlay, public: agreementPublic(overlay) },
    sealing: { secret: sealing, public: agreementPublic(sealing) },
  };
}

/**
 * The enrolment this token continues, or a new one: the same token resumes
 * the pending file's keys and password; another token (or none kept) makes
 * new ones and replaces the file. Kept before anything is sent. A pending
 * file that cannot be read is refused (MSHK6), never replaced.
 */
export async function begin(
  token: Token,
  dir: string,
  step: (s: { kind: 'resumed' | 'replaced'; line: string }) => void,
): Promise<{ pending: Pending; stale?: string }> {
  const { pending: was, damaged } = loadPending(dir);
  if (was && was.node === token.node && was.tokenHash === tokenHash(token)) {
    step({
      kind: 'resumed',
      line: `resuming the enrolment of ${token.node} begun before with this token: the same keys and broker password (${pendingPath(dir)})`,
    });
    return { pending: was };
  }
  // Damaged, it may hold an enrolment the mesh already accepted: new keys would lock this machine out of its
  // own node (the account's password is the one in the file). Starting over is the operator's deliberate act.
  if (damaged) {
    throw refuse(
      'MSHK6',
      `${pendingPath(dir)} cannot be read (${damaged}): it holds an enrolment in flight, its keys and broker password, which the mesh may already have accepted`,
      `to start over: remove ${pendingPath(dir)}; if mesh node list shows ${token.node} enrolled, run mesh node retire ${token.node} on the control plane and enrol with a new token (mesh token issue ${token.node})`,
    );
  }
  if (was)
    step({
      kind: 'replaced',
      line: `replacing the pending enrolment of ${was.node} in ${pendingPath(dir)}: it was begun with another token; its keys are discarded`,
    });
  const keys = nodeKeys();
  const pending: Pending = {
    v: 1,
    node: token.node,
    tokenHash: tokenHash(token),
    correlationId: randomBytes(12).toString('hex'),
    password: randomBytes(32).toString('base64url'),
    keys: { identity: b64(keys.identity.secret), overlay: b64(keys.overlay.secret), sealing: b64(keys.sealing.secret) },
  };
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  await writeAtomic(pendingPath(dir), JSON.stringify(pending, null, 2), 0o600);
  return { pending, stale: was?.correlationId };
}
