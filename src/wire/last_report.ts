// R2: the mesh's signed copy of what a node last reported, handed to a
// rebuilt host with its newest declaration, so it can remove the orphans
// nothing else knows were the mesh's doing. "Never reported" (held: null) and
// "reported nothing" (held: []) stay different answers.
//
// D2: it also carries the floor, the newest declaration this node
// acknowledged (serial and digest), signed by the mesh: a host that lost or
// refused its kept declaration lost its own high-water mark with it, and
// without a floor from somewhere it would accept the mesh's genuine older
// serials replayed to its queue.
import { openEnvelope, signEnvelope, isObject, WireError, LIMITS } from './envelope.js';
import type { HeldEntry } from './report.js';

/** The newest declaration the node acknowledged: none below it, and at it only this digest. */
export interface Floor {
  serial: number;
  digest: string;
}

export interface LastReport {
  mesh: string;
  node: string;
  held: HeldEntry[] | null;
  reportedAt: string | null;
  floor: Floor | null;
  /** The digest of the node's package list the mesh holds (null: none): a host that holds another sends its whole list. */
  packages?: string | null;
}

export function writeLastReport(r: LastReport, secret: Uint8Array): Buffer {
  return signEnvelope(r, secret);
}

/** Verify, then read: another mesh's key, altered bytes or another node's copy is forged. */
export function readLastReport(
  bytes: Uint8Array,
  signingKey: Uint8Array,
  me: { mesh: string; node: string },
): { held: HeldEntry[] | null; floor: Floor | null; packages?: string | null } {
  const v = openEnvelope(bytes, signingKey, LIMITS.declaration, 'last report');
  if (!isObject(v) || v.mesh !== me.mesh || v.node !== me.node)
    throw new WireError('forged', 'last report is not for this node of this mesh.', 'MSHN4');
  let floor: Floor | null = null;
  if (v.floor !== null) {
    const f = v.floor;
    // Absent is malformed, not "no floor": a mesh that forgot to say would reopen the replay.
    if (
      !isObject(f) ||
      !Number.isSafeInteger(f.serial) ||
      (f.serial as number) < 1 ||
      typeof f.digest !== 'string' ||
      !/^[0-9a-f]{64}$/.test(f.digest)
    ) {
      throw new WireError(
        'malformed',
        'last report has no floor {serial, digest} (null when nothing was acknowledged).',
      );
    }
    floor = { serial: f.serial as number, digest: f.digest };
  }
  // Absent: a mesh that keeps no package lists; anything else must be a digest or null.
  const packages = v.packages === undefined || v.packages === null ? v.packages : String(v.packages);
  if (packages && !/^[0-9a-f]{64}$/.test(packages))
    throw new WireError('malformed', 'last report packages must be a sha256 digest or null.');
  if (v.held === null) return { held: null, floor, packages }; // never reported: nothing is known to be ours
  if (!Array.isArray(v.held)) throw new WireError('malformed', 'last report has no held list.');
  return { held: v.held as HeldEntry[], floor, packages };
}
