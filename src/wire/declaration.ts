// A declaration: what one node must be, whole (docs/design.md, "The loop"). Signed
// by the control plane over the exact bytes published; verified by the host on
// every receipt and every read from disk (D1).
import type { Declaration } from './resources.js';
import { openEnvelope, isObject, WireError, LIMITS } from './envelope.js';
import { parseResources } from './parse_resources.js';
import { nodeName } from './names.js';

/** When a declaration was signed and until when it holds, in whole seconds since 1970. */
export interface Freshness {
  signed: number;
  expires: number;
}

/** A freshness signed at SIGNED_MS holding LIFETIME seconds (the lab's and tests' own declarations; serve takes both from SQL). */
export function fresh(lifetime = 7 * 86_400, signedMs = Date.now()): Freshness {
  const signed = Math.floor(signedMs / 1000);
  return { signed, expires: signed + lifetime };
}

/**
 * The writer: the body text a node will verify, byte for byte. RESOURCES is compose's JSON
 * text as PostgreSQL prints it, spliced in rather than parsed and printed again:
 * for 10,000 nodes the round trip through objects cost seconds.
 */
export function bodyText(mesh: string, node: string, serial: number, resources: string, fresh: Freshness): string {
  return `{"mesh":${JSON.stringify(mesh)},"node":${JSON.stringify(node)},"serial":${serial},"signed":${fresh.signed},"expires":${fresh.expires},"resources":${resources}}`;
}

const FIELDS = ['mesh', 'node', 'serial', 'signed', 'expires', 'resources'];

/** The reader of the body bodyText writes. */
export function parseDeclaration(v: unknown): Declaration {
  if (!isObject(v)) throw new WireError('malformed', 'declaration body is not an object.');
  for (const k of Object.keys(v))
    if (!FIELDS.includes(k)) throw new WireError('malformed', `declaration.${k} is not a field of a declaration.`);
  if (typeof v.mesh !== 'string' || !/^[0-9a-f]{16}$/.test(v.mesh))
    throw new WireError('malformed', 'declaration.mesh must be a mesh id.');
  if (!Number.isSafeInteger(v.serial) || (v.serial as number) < 1)
    throw new WireError('malformed', 'declaration.serial must be a positive whole number.');
  // A declaration without an expiry could be withheld and replayed forever: both are required.
  if (!Number.isSafeInteger(v.signed) || (v.signed as number) < 1)
    throw new WireError('malformed', 'declaration.signed must be whole seconds since 1970.');
  if (!Number.isSafeInteger(v.expires) || (v.expires as number) <= (v.signed as number))
    throw new WireError('malformed', 'declaration.expires must be whole seconds since 1970, after declaration.signed.');
  let node: string;
  try {
    node = nodeName(v.node);
  } catch (err) {
    throw new WireError('malformed', `declaration.node: ${(err as Error).message}`);
  }
  return {
    mesh: v.mesh,
    node,
    serial: v.serial as number,
    signed: v.signed as number,
    expires: v.expires as number,
    resources: parseResources(v.resources, 'declaration.resources'),
  };
}

/** Verify, then read. Another mesh's key, altered bytes, or a declaration meant for another node: forged. */
export function readDeclaration(
  bytes: Uint8Array,
  signingKey: Uint8Array,
  me: { mesh: string; node: string },
): Declaration {
  const d = parseDeclaration(openEnvelope(bytes, signingKey, LIMITS.declaration, 'declaration'));
  if (d.mesh !== me.mesh) throw new WireError('forged', `declaration is for mesh ${d.mesh}, not ${me.mesh}.`, 'MSHN4');
  if (d.node !== me.node) throw new WireError('forged', `declaration is for node ${d.node}, not ${me.node}.`, 'MSHN4');
  return d;
}
