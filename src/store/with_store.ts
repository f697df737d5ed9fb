// The one way a command reaches a context's store: open its connection, run
// the work, always end it, and turn our own SQL refusals (MSH..) into the
// sentence a person reads. Work that needs two contexts nests two calls.
import { connect, type Sql } from './connect.js';
import type { Context } from './contexts.js';
import { storeError } from '../sys/errors.js';

export interface StoreOptions {
  max?: number;
  env?: NodeJS.ProcessEnv;
}

export async function withStore<T>(
  context: Context,
  fn: (sql: Sql) => Promise<T>,
  opts: StoreOptions = {},
): Promise<T> {
  const sql = await connect(context, { max: opts.max ?? 1, env: opts.env });
  try {
    return await fn(sql);
  } catch (err) {
    throw storeError(err);
  } finally {
    await sql.end();
  }
}
