// R2: the mesh's signed copy of what a node last reported, handed to a
// rebuilt host with its newest declaration, so it can remove the orphans
// nothing else knows were the mesh's doing. "Never reported" (held: null) and
// "reported nothing" (held: []) stay different answers.
import { openEnvelope, signEnvelope, isObject, WireError, LIMITS } from './envelope.js';
import type { HeldEntry } from './report.js';

export interface LastReport { mesh: string; node: string; held: HeldEntry[] | null; reportedAt: string | null }

export function writeLastReport(r: LastReport, secret: Uint8Array): Buffer {
  return signEnvelope(r, secret);
}

/** Verify, then read: another mesh's key, altered bytes or another node's copy is forged. */
export function readLastReport(bytes: Uint8Array, signingKey: Uint8Array, me: { mesh: string; node: string }): HeldEntry[] | null {
  const v = openEnvelope(bytes, signingKey, LIMITS.declaration, 'last report');
  if (!isObject(v) || v.mesh !== me.mesh || v.node !== me.node) throw new WireError('forged', 'last report is not for this node of this mesh.');
  if (v.held === null) return null; // never reported: nothing is known to be ours
  if (!Array.isArray(v.held)) throw new WireError('malformed', 'last report has no held list.');
  return v.held as HeldEntry[];
}
