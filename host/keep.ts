// The node keeps the last declaration whole and signed, exactly as received,
// and verifies it again every time it reads it back (D1): the file on disk is
// trusted for the same reason the message was, not for being local.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeAtomic } from '../src/sys/atomic.js';
import { readDeclaration } from '../src/wire/declaration.js';
import type { Declaration } from '../src/wire/resources.js';
import type { Identity } from './identity.js';
import { key32 } from '../src/crypto/keys.js';

export const keptPath = (dir: string) => join(dir, 'declaration.signed');

export async function keep(dir: string, bytes: Uint8Array): Promise<void> {
  await writeAtomic(keptPath(dir), bytes, 0o600);
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
