// The node keeps the last declaration whole and signed, exactly as received,
// and verifies it again every time it reads it back (D1): the file on disk is
// trusted for the same reason the message was, not for being local.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readDeclaration } from '../src/wire/declaration.js';
import type { Declaration } from '../src/wire/resources.js';
import type { Identity } from './identity.js';
import { key32 } from '../src/crypto/keys.js';
import { apply, type ApplyOptions, type ApplyResult } from './apply/engine.js';

export const keptPath = (dir: string) => join(dir, 'declaration.signed');

/**
 * Take a verified declaration: keep its signed bytes and raise the mark to it
 * in one durable batch before anything on the machine changes, then apply it
 * (D7). Whatever a power cut interrupts after that batch, the next start
 * finishes from the kept declaration (D6), so the report and the ack that
 * follow claim nothing that is not on disk.
 */
export function takeDeclaration(
  dir: string,
  bytes: Uint8Array,
  decl: Declaration,
  digest: string,
  opts: ApplyOptions,
): Promise<ApplyResult> {
  return apply(decl.resources, 'declared', opts, {
    kept: { path: keptPath(dir), bytes },
    mark: { serial: decl.serial, digest },
  });
}

/** null when none was kept; throws WireError when the kept file is tampered with or another mesh's. */
export function readKept(dir: string, id: Identity): { decl: Declaration; bytes: Buffer } | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(keptPath(dir));
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return null;
    throw err;
  }
  return { decl: readDeclaration(bytes, key32(id.signingKey, 'signingKey'), { mesh: id.mesh, node: id.name }), bytes };
}
