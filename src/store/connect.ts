// One connection pool per context, reached only through that context's own
// variable. Everything the TypeScript asks of the store goes through here.
import postgres from 'postgres';
import { userInfo } from 'node:os';
import { commandName } from '../sys/program.js';
import { type Context } from './contexts.js';
import { storeUrl } from './locate.js';
import { driverSessionAttrs } from './hosts.js';
import { waitForStore } from './wait.js';

export type Sql = postgres.Sql<Record<string, never>>;

export async function connect(ctx: Context, opts: { max?: number; env?: NodeJS.ProcessEnv } = {}): Promise<Sql> {
  const url = storeUrl(ctx, opts.env);
  const sql = postgres(url, {
    max: opts.max ?? 4,
    // A list of hosts: each new connection walks it until it finds the primary
    // (src/store/hosts.ts says why `primary` and not the URL's read-write).
    // A connection lost with its server is opened again on the next query, so
    // after a promotion every pool ends on the new primary by itself.
    target_session_attrs: driverSessionAttrs(url),
    onnotice: () => {},
    connect_timeout: 10,
    // Our own error codes (MSH..) carry their meaning in the code; keep the
    // detail too, for the operator's log.
    transform: { undefined: null },
    // bigint columns (serials) arrive as BigInt, not strings; JSON output turns them into numbers.
    types: { bigint: postgres.BigInt },
    // The command and the user running it, as pg_stat_activity shows a session (the audit history records the role, never this).
    // JIT off: our statements read indexed rows, and PostgreSQL's JIT compiled for longer than they ran; composing
    // the whole fleet is no slower without it (docs/design.md, W2).
    connection: { application_name: whoAmI(), jit: 'off' },
  }) as unknown as Sql;
  await waitForStore(url, () => sql`select 1`);
  return sql;
}

function whoAmI(): string {
  let user = String(process.getuid?.() ?? '?');
  try {
    user = userInfo().username;
  } catch {
    /* no passwd entry: the uid says it */
  }
  return `${commandName()} (${user})`.slice(0, 63);
}
