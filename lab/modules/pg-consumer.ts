// Example consumer side: the connection is assembled here, on the node, from
// the binds file and the secret file; it is never composed centrally (S1).
// It logs in as the login role of the generation it holds (binds "login");
// its sessions act as the pair's group role (binds "user").
import { readBinds, readSecret, usesPaths } from './provision_files.js';

export interface PgConnection {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string;
}

export function pgConnection(root: string, consumer: string, provision: string): PgConnection {
  const p = usesPaths(root, consumer, provision);
  const b = readBinds(p.binds);
  if (b.kind !== 'postgres') throw new Error(`${p.binds} is a ${b.kind}, not a postgres grant.`);
  if (typeof b.login !== 'string')
    throw new Error(
      `${p.binds} names no login role: the mesh has not made this pair's credential for this node yet (mesh secret remake).`,
    );
  return {
    host: String(b.host),
    port: Number(b.port),
    database: String(b.database),
    user: b.login,
    password: readSecret(p.secret),
  };
}
