// The Debian packages a node runs, as its reports carry them: the whole list
// once, then only what changed. Each change names the digest of the list it
// is a change of (its base) and the digest the list comes out at; the mesh
// applies it only on that base and checks the result against that digest
// (inventory.record_packages), and otherwise asks for the whole list again
// through the recover answer, whose last report carries the digest it holds.
import { createHash } from 'node:crypto';
import { isObject, WireError } from './envelope.js';

/** One installed package: name, architecture, version, and the source package it was built from. */
export type Package = [name: string, arch: string, version: string, source: string];

export interface PackageChange {
  /** sha256 hex of the whole list after this change (packagesDigest). */
  digest: string;
  /** The digest of the list this changes; null: this is the whole list. */
  base: string | null;
  /** Packages added or at another version. */
  set: Package[];
  /** Packages no longer installed: name and architecture. */
  gone: [name: string, arch: string][];
}

/**
 * P2: the most packages one change may name. A Debian machine runs a few
 * thousand; the whole list at this cap is still inside serve's report limit
 * (src/serve/intake.ts). Over it the report is refused whole (MSHS2).
 */
export const PACKAGES_CAP = 12_000;

const NAME = /^[a-z0-9][a-z0-9+.-]{0,127}$/;
const ARCH = /^[a-z0-9][a-z0-9-]{0,31}$/;
const VERSION = /^[A-Za-z0-9.+~:-]{1,200}$/;
const DIGEST = /^[0-9a-f]{64}$/;

/** Byte order of name, then architecture: the order inventory.packages_digest reads them in. */
export function sortPackages(list: Package[]): Package[] {
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...list].sort((a, b) => cmp(a[0], b[0]) || cmp(a[1], b[1]));
}

/** sha256 hex over one line NAME TAB ARCH TAB VERSION TAB SOURCE a package, in sortPackages' order. */
export function packagesDigest(list: Package[]): string {
  const h = createHash('sha256');
  for (const p of sortPackages(list)) h.update(`${p[0]}\t${p[1]}\t${p[2]}\t${p[3]}\n`);
  return h.digest('hex');
}

/** The change from BEFORE (null: the mesh holds nothing known) to NOW; undefined when nothing changed. */
export function packageChange(before: Package[] | null, now: Package[]): PackageChange | undefined {
  const digest = packagesDigest(now);
  if (!before) return { digest, base: null, set: sortPackages(now), gone: [] };
  const base = packagesDigest(before);
  if (base === digest) return undefined;
  const key = (p: Package) => `${p[0]}\u0000${p[1]}`;
  const had = new Map(before.map((p) => [key(p), p]));
  const has = new Set(now.map(key));
  const set = now.filter((p) => {
    const b = had.get(key(p));
    return !b || b[2] !== p[2] || b[3] !== p[3];
  });
  const gone = before.filter((p) => !has.has(key(p))).map((p): [string, string] => [p[0], p[1]]);
  return { digest, base, set: sortPackages(set), gone };
}

/** A report's packages field, checked: refused as malformed when not of its shape, MSHS2 when over the cap. */
export function readPackageChange(v: unknown): PackageChange {
  const fail = (what: string) => new WireError('malformed', `report packages ${what}`);
  if (!isObject(v) || typeof v.digest !== 'string' || !DIGEST.test(v.digest)) throw fail('must carry a sha256 digest');
  if (!(v.base === null || (typeof v.base === 'string' && DIGEST.test(v.base))))
    throw fail('base must be a sha256 digest or null (the whole list)');
  if (!Array.isArray(v.set) || !Array.isArray(v.gone)) throw fail('must list set and gone');
  const n = v.set.length + v.gone.length;
  if (n > PACKAGES_CAP)
    throw new WireError('too-large', `report lists ${n} packages, over the cap of ${PACKAGES_CAP}`, 'MSHS2');
  const ok = (p: unknown, len: number) =>
    Array.isArray(p) &&
    p.length === len &&
    NAME.test(String(p[0])) &&
    ARCH.test(String(p[1])) &&
    (len === 2 || (VERSION.test(String(p[2])) && NAME.test(String(p[3]))));
  if (!v.set.every((p) => ok(p, 4))) throw fail('set must list [name, arch, version, source]');
  if (!v.gone.every((p) => ok(p, 2))) throw fail('gone must list [name, arch]');
  return {
    digest: v.digest,
    base: v.base as string | null,
    set: v.set as Package[],
    gone: v.gone as [string, string][],
  };
}
