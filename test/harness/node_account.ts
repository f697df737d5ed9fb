// A test speaking on a node's own broker account, as its host would: for
// suites that send what a host sends (heards, reports, recovers) by hand.
import { connectBroker, type Connection } from '../../src/broker/connect.js';
import { loadIdentity } from '../../host/identity.js';

/** A connection on the account of the host enrolled in DIR, over TLS to the broker it pinned; the account's name beside it. */
export async function connectAsHost(dir: string, name: string): Promise<{ conn: Connection; user: string }> {
  const id = loadIdentity(dir);
  if (!id) throw new Error(`no identity in ${dir}: enrol the host first`);
  const conn = await connectBroker(
    {
      host: id.broker.host,
      port: id.broker.port,
      vhost: id.broker.vhost,
      user: id.broker.user,
      password: id.password,
      fingerprint: id.broker.fingerprint,
    },
    { name },
  );
  return { conn, user: id.broker.user };
}
