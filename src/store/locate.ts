// Where a context's store is. A context reads MESH_STORE_<CONTEXT> and nothing
// else, so reaching another context's store needs a new variable, visible where
// the program is run. The value is a postgres URL without a password, or the
// path of a 0600 file holding the URL: a password must never sit in the
// environment, where `ps e` and /proc/<pid>/environ print it.
import { readFileSync, statSync } from 'node:fs';
import { type Context, storeVariable, storeRole } from './contexts.js';
import { parseStoreUrl, describeUrl } from './hosts.js';
import { refuse } from '../sys/errors.js';

export { describeUrl };

export function storeUrl(ctx: Context, env: NodeJS.ProcessEnv = process.env): string {
  const url = urlFromVariable(storeVariable(ctx), env);
  if (url === undefined) {
    throw refuse(
      'MSHE9',
      `${storeVariable(ctx)} is not set`,
      `the ${ctx} context needs the URL of its store (postgres://${storeRole(ctx)}@HOST:PORT/DB) or the path of a 0600 file holding it`,
    );
  }
  return url;
}

/** The URL a variable names: itself (no password in it), or a 0600 file holding it; undefined when it is unset. */
export function urlFromVariable(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const value = env[name];
  if (!value) return undefined;
  if (value.startsWith('/')) {
    const st = statSync(value, { throwIfNoEntry: false });
    if (!st) throw refuse('MSHH0', `${name} names ${value}, which does not exist`);
    if ((st.mode & 0o077) !== 0) {
      throw refuse(
        'MSHH1',
        `${name} names ${value}, which others can read (mode ${(st.mode & 0o777).toString(8)})`,
        `chmod 600 ${value}`,
      );
    }
    return readFileSync(value, 'utf8').trim();
  }
  // A list of hosts is a URL too (src/store/hosts.ts): its password is looked for the same way.
  if (parseStoreUrl(value).password) {
    throw refuse(
      'MSHH2',
      `${name} carries a password in the environment`,
      `put the URL in a 0600 file and set ${name} to its path`,
    );
  }
  return value;
}
