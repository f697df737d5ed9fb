// Example consumer side: the connection is assembled here, on the node, from
// the binds file and the secret file; it is never composed centrally (S1).
import { readBinds, readSecret, usesPaths } from './provision_files.js';

export interface PgConnection { host: string; port: number; database: string; user: string; password: string }

export function pgConnection(root: string, consumer: string, provision: string): PgConnection {
  const p = usesPaths(root, consumer, provision);
  const b = readBinds(p.binds);
  if (b.kind !== 'postgres') throw new Error(`${p.binds} is a ${b.kind}, not a postgres grant.`);
  return { host: String(b.host), port: Number(b.port), database: String(b.database), user: String(b.user), password: readSecret(p.secret) };
}
