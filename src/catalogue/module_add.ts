// `mesh module add FILE`: a module is a name and the resources it puts on a
// node, checked by the same parser the host runs on every declaration.
import { readFileSync } from 'node:fs';
import { withStore } from '../store/with_store.js';
import { parseModuleEntries, withIds } from '../wire/parse_resources.js';
import { nodeName } from '../wire/names.js';
import { isObject } from '../wire/envelope.js';
import { refuse } from '../sys/errors.js';
import { moduleRefusal } from './module_refusal.js';
import type { ModuleEntry } from '../wire/resources.js';

export function readModuleFile(path: string): { name: string; resources: unknown[] } {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw refuse('MSH36', `${path} is not a JSON module file (${(err as Error).message})`);
  }
  if (!isObject(v) || !Array.isArray(v.resources)) throw refuse('MSH37', `${path} is not a module`);
  const name = nodeName(v.name, 'module name');
  let resources: ModuleEntry[];
  try {
    resources = parseModuleEntries(withIds(v.resources), `${path}: resources`);
  } catch (err) {
    throw moduleRefusal(err);
  }
  return { name, resources };
}

export async function moduleAdd(path: string) {
  const m = readModuleFile(path);
  return withStore('catalogue', async (sql) => {
    const [row] = await sql`select * from catalogue.put_module(${m.name}, ${sql.json(m.resources as never)}, 'handed')`;
    return { name: row!.name as string, version: row!.version as number, resources: m.resources.length };
  });
}
