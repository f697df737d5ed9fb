import type { ContextName } from '../sys/errors.js';

// The bounded contexts. Each is a schema and a role that owns it (docs/design.md,
// "The shape"). The order is the order their migrations run: a context may read
// only what an earlier one granted it, and assignment, which composes every
// declaration from the others' views, comes after them; audit is last, so it
// can hang its triggers on the tables where the others' facts land.
// The register (src/sys/errors.ts) names the same contexts, and the compiler holds this list to its names.
export const CONTEXTS = [
  'inventory',
  'catalogue',
  'secret',
  'provision',
  'overlay',
  'assignment',
  'audit',
] as const satisfies readonly ContextName[];
export type Context = (typeof CONTEXTS)[number];

/** The one variable a context's code may read to reach its store. */
export function storeVariable(ctx: Context): string {
  return `MESH_STORE_${ctx.toUpperCase()}`;
}

/**
 * The role a context's URL logs in as: the context's own, except audit's.
 * The history's owner (mesh_audit) may not log in (C3); whoever reads the
 * history logs in as mesh_audit_reader, which may SELECT and nothing else.
 */
export function storeRole(ctx: Context): string {
  return ctx === 'audit' ? 'mesh_audit_reader' : `mesh_${ctx}`;
}

/**
 * The role the console logs in as for a context it shows (P1): the context's
 * reader, which may SELECT what the console shows and write nothing itself;
 * the console's sign-in and sign-out run as inventory's owner through its
 * security-definer functions. For audit it is the history's one reader.
 */
export function readerRole(ctx: Context): string {
  return `mesh_${ctx}_reader`;
}
