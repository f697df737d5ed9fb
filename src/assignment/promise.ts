// `mesh promise add|list|remove`: promises over the network, the firewall and
// the services (Q1). The kinds, the predicates and the check in the
// transaction of every change are SQL (sql/assignment/0070-promises.sql);
// here the command's options become one call.
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { refuse } from '../sys/errors.js';
import { isPort } from '../wire/names.js';

export interface PromiseSpec {
  name: string;
  site?: string;
  closed?: number;
  node?: string;
  /** PEER:PORT */
  reaches?: string;
  module?: string;
  runs?: string;
  hubs?: number;
}

export interface PromiseRow {
  name: string;
  kind: string;
  promise: string;
  state: 'kept' | 'broken';
  why: string | null;
  made_at: Date;
}

const KINDS = ['closed', 'reaches', 'runs', 'hubs'] as const;

/** The one kind the options name, with its facts; anything else is refused with the four forms. */
function kindOf(s: PromiseSpec) {
  const given = KINDS.filter((k) => s[k] !== undefined);
  if (given.length !== 1)
    throw refuse(
      'MSHQ3',
      `promise ${s.name}: give exactly one of --closed, --reaches, --runs, --hubs (${given.length ? `got ${given.map((k) => `--${k}`).join(', ')}` : 'got none'})`,
    );
  const kind = given[0]!;
  let peer: string | null = null;
  let port: number | null = null;
  if (kind === 'closed') port = Number(s.closed);
  if (kind === 'reaches') {
    const m = /^([a-z][a-z0-9-]{0,62}):(\d{1,5})$/.exec(String(s.reaches));
    if (!m) throw refuse('MSHQ3', `promise ${s.name}: --reaches ${s.reaches} is not PEER:PORT (db1:5432)`);
    peer = m[1]!;
    port = Number(m[2]);
  }
  if (port !== null && !isPort(port)) throw refuse('MSHQ3', `promise ${s.name}: ${port} is not a port number`);
  return { kind, peer, port };
}

export async function promiseAdd(s: PromiseSpec): Promise<PromiseRow> {
  const { kind, peer, port } = kindOf(s);
  return withStore('assignment', async (sql) => {
    await sql`select assignment.add_promise(promise_name => ${s.name}::text, promise_kind => ${kind}::text,
                site_name => ${s.site ?? null}::text, node_name => ${s.node ?? null}::text, peer_name => ${peer}::text,
                module_name => ${s.module ?? null}::text, service_name => ${s.runs === undefined ? null : String(s.runs)}::text,
                port_number => ${port}::int, hubs_at_least => ${s.hubs === undefined ? null : Number(s.hubs)}::int)`;
    const [row] = await sql<PromiseRow[]>`select * from assignment.promise_state where name = ${s.name}`;
    return row!;
  });
}

export function promiseList(): Promise<PromiseRow[]> {
  return withStore('assignment', readPromises);
}

/** Every promise and its state: `mesh promise list` and the console's promises page. */
export const readPromises = (sql: Sql) =>
  sql<PromiseRow[]>`select * from assignment.promise_state order by name` as Promise<PromiseRow[]>;

export async function promiseRemove(name: string): Promise<{ name: string; removed: true }> {
  return withStore('assignment', async (sql) => {
    await sql`select assignment.remove_promise(${name}::text)`;
    return { name, removed: true as const };
  });
}
