// A declaration: what one node must be, whole (DESIGN.md "The loop"). Signed
// by the control plane over the exact bytes published; verified by the host on
// every receipt and every read from disk (D1).
import type { Declaration } from './resources.js';
import { openEnvelope, isObject, WireError, LIMITS } from './envelope.js';
import { parseResources } from './parse_resources.js';
import { nodeName } from './names.js';

/**
 * The writer: the body text a node will verify, byte for byte. RESOURCES is compose's JSON
 * text as PostgreSQL prints it, spliced in rather than parsed and printed again:
 * for 10,000 nodes the round trip through objects cost seconds.
 */
export function bodyText(mesh: string, node: string, serial: number, resources: string): string {
  return `{"mesh":${JSON.stringify(mesh)},"node":${JSON.stringify(node)},"serial":${serial},"resources":${resources}}`;
}

/** The reader of the body bodyText writes. */
export function parseDeclaration(v: unknown): Declaration {
  if (!isObject(v)) throw new WireError('malformed', 'declaration body is not an object.');
  for (const k of Object.keys(v)) if (!['mesh', 'node', 'serial', 'resources'].includes(k)) throw new WireError('malformed', `declaration.${k} is not a field of a declaration.`);
  if (typeof v.mesh !== 'string' || !/^[0-9a-f]{16}$/.test(v.mesh)) throw new WireError('malformed', 'declaration.mesh must be a mesh id.');
  if (!Number.isSafeInteger(v.serial) || (v.serial as number) < 1) throw new WireError('malformed', 'declaration.serial must be a positive whole number.');
  let node: string;
  try { node = nodeName(v.node); } catch (err) { throw new WireError('malformed', `declaration.node: ${(err as Error).message}`); }
  return { mesh: v.mesh, node, serial: v.serial as number, resources: parseResources(v.resources, 'declaration.resources') };
}

/** Verify, then read. Another mesh's key, altered bytes, or a declaration meant for another node: forged. */
export function readDeclaration(bytes: Uint8Array, signingKey: Uint8Array, me: { mesh: string; node: string }): Declaration {
  const d = parseDeclaration(openEnvelope(bytes, signingKey, LIMITS.declaration, 'declaration'));
  if (d.mesh !== me.mesh) throw new WireError('forged', `declaration is for mesh ${d.mesh}, not ${me.mesh}.`);
  if (d.node !== me.node) throw new WireError('forged', `declaration is for node ${d.node}, not ${me.node}.`);
  return d;
}
