// Reading what the mesh wrote for a provision (S2): a binds file of readable
// facts and, beside it, a secret file holding the credential alone. Shared by
// the example modules; the contract is the files, not this code.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export interface Binds {
  kind: 'postgres' | 'route';
  provision: string;
  consumer: string;
  [k: string]: unknown;
}

export function readBinds(path: string): Binds {
  const v = JSON.parse(readFileSync(path, 'utf8')) as Binds;
  if (typeof v !== 'object' || v === null || typeof v.kind !== 'string' || typeof v.consumer !== 'string') {
    throw new Error(`${path} is not a binds file the mesh wrote: expected {kind, provision, consumer, ...}.`);
  }
  return v;
}

/** The credential alone, exactly as the file holds it (no trailing newline is added by the mesh). */
export function readSecret(path: string): string {
  return readFileSync(path, 'utf8');
}

/** A provider's directory: one binds file (and for postgres one secret file) per consumer. */
export function readProvides(dir: string): { binds: Binds; secretPath?: string }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.binds'))
    .sort()
    .map((f) => {
      const secretPath = join(dir, f.replace(/\.binds$/, '.secret'));
      return { binds: readBinds(join(dir, f)), secretPath: existsSync(secretPath) ? secretPath : undefined };
    });
}

/** Where a consumer module finds what it was granted: <root>/uses/<consumer>/<provision>.{binds,secret}. */
export function usesPaths(root: string, consumer: string, provision: string) {
  const base = join(root, 'uses', consumer, provision);
  return { binds: `${base}.binds`, secret: `${base}.secret` };
}
