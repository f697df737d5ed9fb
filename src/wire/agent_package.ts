// V2: a host asking serve for chunks of an agent package, and serve's
// answer, one agent-chunk message a chunk on the node's own queue (its
// headers say which package, which chunk, of how many). The ask is the one
// format here: its writer (mesh-host) beside its reader (mesh serve).
import { WireError, isObject } from './envelope.js';

/** Bytes in one chunk: a few fit the node's queue beside a declaration. */
export const CHUNK = 1 << 20;
/** Chunks one ask may want. */
export const MOST_ASKED = 8;

export interface PackageAsk {
  sha256: string;
  from: number;
  count: number;
}

export const writePackageAsk = (a: PackageAsk): Buffer => Buffer.from(JSON.stringify(a));

export function readPackageAsk(b: Buffer): PackageAsk {
  let v: unknown;
  try {
    v = JSON.parse(b.toString('utf8'));
  } catch {
    v = undefined;
  }
  if (
    !isObject(v) ||
    Object.keys(v).length !== 3 ||
    typeof v.sha256 !== 'string' ||
    !/^[0-9a-f]{64}$/.test(v.sha256) ||
    !Number.isSafeInteger(v.from) ||
    (v.from as number) < 0 ||
    !Number.isSafeInteger(v.count) ||
    (v.count as number) < 1 ||
    (v.count as number) > MOST_ASKED
  )
    throw new WireError(
      'malformed',
      `an agent package ask is {"sha256": hex, "from": chunk, "count": 1 to ${MOST_ASKED}}, not ${b.toString('utf8').slice(0, 80)}`,
      'MSHZ6',
    );
  return { sha256: v.sha256, from: v.from as number, count: v.count as number };
}
