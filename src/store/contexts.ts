// The bounded contexts. Each is a schema and a role that owns it (DESIGN.md
// "Contexts"); the order is the order their migrations run, because a later
// context's views may read an earlier one's granted views.
export const CONTEXTS = ['inventory', 'catalogue', 'assignment', 'secret', 'provision', 'overlay'] as const;
export type Context = (typeof CONTEXTS)[number];

export function isContext(s: string): s is Context {
  return (CONTEXTS as readonly string[]).includes(s);
}

/** The one variable a context's code may read to reach its store. */
export function storeVariable(ctx: Context): string {
  return `MESH_STORE_${ctx.toUpperCase()}`;
}
