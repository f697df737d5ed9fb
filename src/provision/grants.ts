// `mesh provision ...`: offers, grants (one pair, one credential), and the
// listing a DBA would get from provision.grant_status. Rules live in SQL.
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';
import { nodeName } from '../wire/names.js';
import { declare, type Declared } from '../assignment/declare.js';
import { preparePair } from './credential.js';
import { storePair, forgetSecret, type Made, type Prepared } from '../secret/store_pair.js';
import { windowOf } from '../secret/window.js';
import { refuse } from '../sys/errors.js';

const withProvision = <T>(f: (sql: Sql) => Promise<T>): Promise<T> => withStore('provision', f);

export async function setRoot(root?: string) {
  return withProvision(async (sql) => {
    const [row] = root
      ? await sql`select provision.set_files_root(root => ${root}::text) as files_root`
      : await sql`select files_root from provision.setting`;
    return { root: row!.files_root as string };
  });
}

export interface OfferOptions {
  kind: string;
  provider: string;
  host?: string;
  port?: number;
}

export async function offer(name: string, o: OfferOptions) {
  nodeName(name, 'provision name');
  nodeName(o.provider, 'provider module');
  const facts: Record<string, unknown> = {};
  if (o.kind === 'postgres') {
    if (!o.host || !o.port) throw refuse('MSHB1', 'a postgres provision needs where its server listens');
    facts.host = o.host;
    facts.port = Number(o.port);
  }
  return withProvision(async (sql) => {
    await sql`select provision.offer(provision_name => ${name}::text, provision_kind => ${o.kind}::text,
                                     provider_module => ${o.provider}::text, provision_facts => ${sql.json(facts as never)}::jsonb)`;
    return { provision: name, kind: o.kind, provider: o.provider, facts };
  });
}

export interface GrantOptions {
  database?: string;
  user?: string;
  name?: string;
  port?: number;
}

export interface Granted {
  provision: string;
  consumer: string;
  credential: Made | null;
  sent: Declared[];
  note: string;
}

/** Record the pair; when both ends already run somewhere, make its credential and push both ends now. */
export async function grant(provision: string, consumer: string, o: GrantOptions): Promise<Granted> {
  nodeName(consumer, 'consumer module');
  const composed = await withStore('provision', async (psql) => {
    let prepared: Prepared | null = null;
    let note = '';
    const [kind] = await psql`select kind from provision.provision where name = ${provision}`;
    const facts =
      kind?.kind === 'route'
        ? { name: o.name, port: o.port === undefined ? undefined : Number(o.port) }
        : {
            database: o.database ?? consumer.replace(/-/g, '_'),
            user: o.user ?? `${consumer}_${provision}`.replace(/-/g, '_'),
          };
    const [row] =
      await psql`select provision.grant(provision_name => ${provision}::text, consumer_module => ${consumer}::text,
                                                    grant_facts => ${psql.json(facts as never)}::jsonb) as secret`;
    if (row!.secret) {
      const [h] = await psql`select count(*)::int as n from provision.affected_holders(${provision}, ${consumer})`;
      if (h!.n > 0) prepared = await preparePair(psql, provision, consumer);
      else note = 'no node runs either end yet: after mesh assign, run mesh secret remake to make its credential';
    }
    return { prepared, note };
  });
  const made: Made | null = composed.prepared ? await storePair(composed.prepared) : null;
  let note = composed.note;
  const sent = made ? await declare({ nodes: made.holders.map((x) => x.node) }) : [];
  if (made) note = windowOf(made, sent);
  return { provision, consumer, credential: made, sent, note };
}

/** Remove the pair and forget its credential; the next declaration removes both ends' files. */
export async function revoke(provision: string, consumer: string) {
  const r = await withProvision(async (sql) => {
    const [row] = await sql`select coalesce(provision.revoke(${provision}, ${consumer}), false) as gone,
                                   provision.secret_of(${provision}, ${consumer}) as secret`;
    return { provision, consumer, revoked: Boolean(row!.gone), secret: row!.secret as string };
  });
  await forgetSecret(r.secret);
  return r;
}

export async function provisionList() {
  return withProvision(
    (
      sql,
    ) => sql`select provision, kind, provider, consumer, facts, holders, generation, settled, waiting_for, granted_at
                                        from provision.grant_status order by provision, consumer`,
  );
}

export async function holders(provision: string, consumer: string) {
  return withProvision(
    (sql) => sql`select node, sides, sealing_key is not null as resolvable
                                       from provision.affected_holders(${provision}, ${consumer})`,
  );
}
