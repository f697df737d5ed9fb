// What a node says about itself after an apply, a reconcile or a refusal. A
// report is a statement, not a write: the mesh keeps it as a backup copy.
import { isObject, parseJson, WireError, LIMITS } from './envelope.js';
import type { Resource, Origin } from './resources.js';
import { plainText } from '../sys/text.js';
import { readPackageChange, type PackageChange } from './packages.js';

/** What the host records of a resource it applied, enough to remove it; what it reports it holds. */
export interface HeldEntry {
  id: string;
  kind: Resource['kind'];
  /** The path or name the driver needs to remove it. */
  target: string;
  origin: Origin;
  /** sha256 hex of what was applied (content, unit, config), for drift and restart-on. */
  digest: string;
}

/**
 * What a host says of a declaration it refused (D1, D2, C2), one word each: forged (not
 * signed by this mesh's key, or for another mesh or node), malformed (not of its form),
 * replayed (genuine, not newer than the one applied), stale (genuine, expired on arrival).
 * inventory.refusal takes these and no other (its check), and the history files each as
 * its own kind (refused-forged, ...).
 */
export const REFUSAL_FAULTS = ['forged', 'malformed', 'replayed', 'stale'] as const;
export type RefusalFault = (typeof REFUSAL_FAULTS)[number];

export interface Report {
  v: 1;
  /** The declaration serial this account is given against (0: none yet). */
  serial: number;
  held: HeldEntry[];
  failed: { id: string; error: string }[];
  /** Put back by a reconcile (D6). */
  corrected: string[];
  /** Older declarations of a drained backlog, never applied (D2). */
  superseded: number[];
  /** A declaration refused, and why. Moves last_seen only. */
  refused?: { serial?: number; fault: RefusalFault; reason: string };
  /** Until when the declaration held is valid, seconds since 1970 (its signed expiry). */
  holdsUntil?: number;
  /** That time has passed: the host still applies it, and says its feed may be frozen. */
  stale?: boolean;
  /** The version of the mesh-host that sent it, MAJOR.MINOR.PATCH (V1); agents before versions were reported send none. */
  agent?: string;
  /** What changed in the node's installed Debian packages since the list the mesh holds (src/wire/packages.ts). */
  packages?: PackageChange;
}

/** What a version looks like, as inventory.node's check says it (inventory 0017). */
export const AGENT_VERSION = /^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$/;

export function writeReport(r: Report): Buffer {
  return Buffer.from(JSON.stringify(r));
}

const str = (v: unknown, max = 4096) => typeof v === 'string' && v.length <= max;

/**
 * P2: the longest each list of a report may be. A report over one is refused
 * whole (MSHS2), never cut: a held list cut short would tell a rebuilt node to
 * keep less than it holds. A node holds a few hundred resources; superseded
 * names what its queue carried (a few declarations at most).
 */
export const REPORT_CAPS = { held: 4096, failed: 4096, corrected: 4096, superseded: 256 } as const;

export function readReport(bytes: Uint8Array): Report {
  if (bytes.length > LIMITS.declaration)
    throw new WireError('too-large', `report is ${bytes.length} bytes, over the limit.`);
  const v = parseJson(Buffer.from(bytes).toString('utf8'), 'report');
  const fail = (what: string) => new WireError('malformed', `report ${what}`);
  if (!isObject(v) || v.v !== 1) throw fail('is not {v:1, ...}');
  for (const [list, cap] of Object.entries(REPORT_CAPS)) {
    const n = Array.isArray(v[list]) ? (v[list] as unknown[]).length : 0;
    if (n > cap) throw new WireError('too-large', `report lists ${n} ${list}, over the cap of ${cap}`, 'MSHS2');
  }
  if (!Number.isSafeInteger(v.serial) || (v.serial as number) < 0) throw fail('serial must be a whole number');
  if (
    !Array.isArray(v.held) ||
    !v.held.every(
      (h) =>
        isObject(h) &&
        str(h.id, 300) &&
        str(h.kind, 20) &&
        str(h.target) &&
        (h.origin === 'carried' || h.origin === 'declared') &&
        str(h.digest, 128),
    )
  )
    throw fail('held must list {id, kind, target, origin, digest}');
  if (!Array.isArray(v.failed) || !v.failed.every((f) => isObject(f) && str(f.id, 300) && str(f.error)))
    throw fail('failed must list {id, error}');
  if (!Array.isArray(v.corrected) || !v.corrected.every((c) => str(c, 300))) throw fail('corrected must list ids');
  if (!Array.isArray(v.superseded) || !v.superseded.every((s) => Number.isSafeInteger(s)))
    throw fail('superseded must list serials');
  if (
    v.refused !== undefined &&
    !(
      isObject(v.refused) &&
      (REFUSAL_FAULTS as readonly unknown[]).includes(v.refused.fault) &&
      str(v.refused.reason) &&
      (v.refused.serial === undefined || v.refused.serial === null || Number.isSafeInteger(v.refused.serial))
    )
  )
    throw fail(`refused must be {fault, reason, serial?} with fault one of ${REFUSAL_FAULTS.join(', ')}`);
  if (v.holdsUntil !== undefined && !(Number.isSafeInteger(v.holdsUntil) && (v.holdsUntil as number) > 0))
    throw fail('holdsUntil must be whole seconds since 1970');
  if (v.stale !== undefined && typeof v.stale !== 'boolean') throw fail('stale must be true or false');
  if (v.agent !== undefined && !(typeof v.agent === 'string' && AGENT_VERSION.test(v.agent)))
    throw fail('agent must be a version, MAJOR.MINOR.PATCH');
  if (v.packages !== undefined) v.packages = readPackageChange(v.packages);
  return clean(v as unknown as Report);
}

/** The report with every string it carries made plain (src/sys/text.ts): a node's words never reach a terminal raw. */
function clean(r: Report): Report {
  return {
    ...r,
    held: r.held.map((h) => ({
      ...h,
      id: plainText(h.id),
      kind: plainText(h.kind) as HeldEntry['kind'],
      target: plainText(h.target),
      digest: plainText(h.digest),
    })),
    failed: r.failed.map((f) => ({ ...f, id: plainText(f.id), error: plainText(f.error) })),
    corrected: r.corrected.map(plainText),
    ...(r.refused ? { refused: { ...r.refused, reason: plainText(r.refused.reason) } } : {}),
  };
}
