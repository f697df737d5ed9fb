// `mesh token issue`: a node's row and one-time token in SQL, then its broker
// account whose first password is the token's secret, and the line that hands
// the token to mesh-host on its standard input.
import { createHash, randomBytes } from 'node:crypto';
import { withStore } from '../store/with_store.js';
import { nodeName, isHostPort } from '../wire/names.js';
import { writeToken, pinOf } from '../wire/token.js';
import { Accounts } from '../broker/accounts.js';
import { readBroker, readSigner } from '../home/home.js';
import { management } from '../broker/admin.js';
import { refuse } from '../sys/errors.js';

export function parseDuration(s: string, option = '--ttl'): string {
  const m = /^(\d+)(s|m|h|d)$/.exec(s);
  if (!m)
    throw refuse(
      'MSH15',
      `${option} ${JSON.stringify(s)} is not a duration`,
      'use a number and s, m, h or d (e.g. 30m, 24h)',
    );
  return `${m[1]} ${{ s: 'seconds', m: 'minutes', h: 'hours', d: 'days' }[m[2] as 's']}`;
}

export interface IssueOptions {
  site?: string;
  dialable?: string;
  ttl?: string;
}

export async function issueToken(name: string, opts: IssueOptions = {}) {
  nodeName(name);
  if (opts.site !== undefined) nodeName(opts.site, 'site');
  if (opts.dialable !== undefined && !isHostPort(opts.dialable)) {
    throw refuse('MSH16', `--dialable ${JSON.stringify(opts.dialable)} is not HOST:PORT`);
  }
  const ttl = parseDuration(opts.ttl ?? '1h');
  const broker = readBroker();
  // E6: the token names the mesh's key; the host keeps no welcome naming another.
  const pin = pinOf(readSigner().public);
  const secret = randomBytes(24).toString('base64url');
  const hash = createHash('sha256').update(secret).digest();
  const { expires, brokers } = await withStore('inventory', async (sql) => {
    const [row] = await sql<{ expires: Date }[]>`
      select inventory.issue_token(node_name => ${name}::text, token_hash => ${hash}::bytea,
        node_site => ${opts.site ?? null}::text, node_dialable => ${opts.dialable ?? null}::text, ttl => ${ttl}::interval) as expires`;
    // Every broker the mesh knows, in the order declarations list them; none recorded: the home's alone.
    const known = await sql<
      { address: string; fingerprint: string }[]
    >`select address, fingerprint from inventory.broker_nodes order by address`;
    return {
      expires: row!.expires,
      brokers: known.length
        ? known.map((b) => ({ address: b.address, fingerprint: b.fingerprint }))
        : [{ address: broker.public, fingerprint: broker.fingerprint }],
    };
  });
  const accounts = new Accounts(management(broker));
  await accounts.createNode(name, secret);
  const token = writeToken({
    broker: brokers[0]!.address,
    fingerprint: brokers[0]!.fingerprint,
    brokers,
    vhost: broker.vhost,
    node: name,
    user: accounts.account(name),
    secret,
    pin,
  });
  // E7: the token goes on the new machine's standard input; echo is the shell's own, on no process's command line.
  return { node: name, expires, token, command: `echo ${token} | mesh-host enrol` };
}
