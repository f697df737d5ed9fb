// SQL behaviour tests call a context's functions as that context's own role,
// the way its code does (never as the superuser, which would pass any grant
// and own every table). Setup goes through the other contexts' functions, as
// their roles, so a test starts from states the mesh itself can reach.
import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import * as assert from 'uvu/assert';
import { CONTEXTS, type Context } from '../../src/store/contexts.js';
import { freshStore, type Store } from '../harness/store.js';

export type Roles = Record<Context, postgres.Sql>;

export interface SqlCtx {
  store: Store;
  as: Roles;
}

export async function openRoles(): Promise<SqlCtx> {
  const store = await freshStore();
  const as = Object.fromEntries(
    CONTEXTS.map((c) => [c, postgres(store.url(c), { max: 4, onnotice: () => {} })]),
  ) as unknown as Roles;
  const [who] =
    await as.inventory`select current_user as u, (select rolsuper from pg_roles where rolname = current_user) as su`;
  assert.equal(
    { u: who!.u, su: who!.su },
    { u: 'mesh_inventory', su: false },
    'tests run as the context role, not a superuser',
  );
  return { store, as };
}

export async function closeRoles(ctx: SqlCtx | undefined): Promise<void> {
  if (!ctx) return;
  await Promise.allSettled(Object.values(ctx.as ?? {}).map((s) => s.end({ timeout: 5 })));
  await ctx.store?.drop();
}

/** The refusal `p` must end in: the error with that SQLSTATE (an MSH code, or PostgreSQL's own). */
export async function refusedWith(p: PromiseLike<unknown>, code: string): Promise<postgres.PostgresError> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  if (!err) assert.unreachable(`expected a refusal with ${code}; it was accepted`);
  const e = err as postgres.PostgresError;
  assert.is(e.code, code, `expected ${code}, got ${e.code}: ${e.message}`);
  return e;
}

export const key = () => randomBytes(32);

export interface Enrolled {
  name: string;
  identity: Buffer;
  overlay: Buffer;
  sealing: Buffer;
}

/** Issue a token and spend it, as inventory's role: a node that joined. */
export async function enrol(
  as: Roles,
  name: string,
  opts: { site?: string; dialable?: string } = {},
): Promise<Enrolled> {
  const secret = randomBytes(24);
  const hash = createHash('sha256').update(secret).digest();
  await as.inventory`select inventory.issue_token(node_name => ${name}::text, token_hash => ${hash}::bytea,
    node_site => ${opts.site ?? null}::text, node_dialable => ${opts.dialable ?? null}::text, ttl => ${'1 hour'}::interval)`;
  const n = { name, identity: key(), overlay: key(), sealing: key() };
  const [r] = await as.inventory`select inventory.spend_token(token_hash => ${hash}::bytea, node_name => ${name}::text,
    identity_key => ${n.identity}::bytea, overlay_key => ${n.overlay}::bytea, sealing_key => ${n.sealing}::bytea) as outcome`;
  assert.is(r!.outcome, 'enrolled');
  return n;
}

/** A module in the catalogue, as catalogue's role. */
export async function putModule(as: Roles, name: string, resources: unknown[] = []): Promise<void> {
  await as.catalogue`select * from catalogue.put_module(module_name => ${name}::text, module_resources => ${as.catalogue.json(resources as never)}::jsonb, module_origin => 'handed')`;
}

/** Module runs on node, as assignment's role. */
export async function assign(as: Roles, module: string, node: string): Promise<void> {
  await as.assignment`select assignment.assign(module_name => ${module}::text, node_name => ${node}::text)`;
}

/** The pair the provision suites start from: modules pg and app, db1 enrolled and running pg, web1 enrolled and running app. */
export async function pgAndApp(as: Roles): Promise<{ db1: Enrolled; web1: Enrolled }> {
  for (const m of ['pg', 'app']) await putModule(as, m);
  const db1 = await enrol(as, 'db1');
  const web1 = await enrol(as, 'web1');
  await assign(as, 'pg', 'db1');
  await assign(as, 'app', 'web1');
  return { db1, web1 };
}

/** Compose, record and owe NODE's declaration as declare does (signature aside), as assignment's role; its serial. */
export async function declareOne(as: Roles, node: string): Promise<number> {
  const a = as.assignment;
  const [c] =
    await a`select resources::text as r, encode(resources_hash, 'hex') as h from assignment.compose_each(array[${node}]::text[])`;
  const [s] = await a`select serial from assignment.allocate_serials(array[${node}]::text[])`;
  const serial = Number(s!.serial);
  const env = JSON.stringify({
    v: 1,
    body: `{"mesh":"0123456789abcdef","node":"${node}","serial":${serial},"resources":${c!.r}}`,
    sig: 'unsigned',
  });
  await a`select assignment.record_declarations(array[${node}]::text[], array[${serial}]::bigint[], array[${'00'.repeat(32)}]::text[],
            array[${c!.h as string}]::text[], ${env}::text)`;
  return serial;
}

/** Thrown to end a transaction a test means to roll back; caught by whoever threw it. */
export class Rollback extends Error {}

/** F as the superuser with ordinary and event triggers off (replica mode), rolled back after: tampering only a superuser can do, not outliving the test. */
export async function tampered<T>(ctx: SqlCtx, f: (sql: postgres.TransactionSql) => Promise<T>): Promise<T> {
  let out: T | undefined;
  await ctx.store.admin
    .begin(async (sql) => {
      await sql`set local session_replication_role = replica`;
      out = await f(sql);
      throw new Rollback();
    })
    .catch((e) => {
      if (!(e instanceof Rollback)) throw e;
    });
  return out as T;
}
