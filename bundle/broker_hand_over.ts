// The first node's step of adding a broker node (bundle/broker_cluster.ts
// says the whole of it): run by install.ts --add-broker-node NAME.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { connect } from '../src/store/connect.js';
import { redeclare } from '../src/provision/redeclare.js';
import { joinHostPort } from '../src/wire/names.js';
import { brokerAdd } from '../src/inventory/broker.js';
import { controlEnv, paths, type Options } from './layout.js';
import { brokerNode, makeCertificate } from './rabbitmq.js';
import { readCookie, writeHandOver } from './broker_cluster.js';
import { refuse } from '../src/sys/errors.js';

/** A node's overlay address, from the store; refused with the remedy when it has none. */
export async function overlayAddress(o: Options, node: string): Promise<string> {
  Object.assign(process.env, controlEnv(o));
  if (!readFileSafe(paths(o).storeFile('overlay'))) {
    throw refuse('MSHL1', `${paths(o).storeFile('overlay')} is missing, so this machine is no first node`);
  }
  const ov = await connect('overlay', { max: 1 });
  try {
    await ov`select overlay.allocate_addresses()`;
    const [m] = await ov`select host(address) as address from overlay.member where name = ${node}`;
    if (!m?.address)
      throw refuse(
        'MSHL2',
        `${node} has no overlay address`,
        `enrol it first (mesh token issue ${node}, then mesh-host enrol on it), and see mesh overlay show`,
      );
    return m.address as string;
  } finally {
    await ov.end();
  }
}

function readFileSafe(p: string): string | null {
  try {
    return readFileSync(p, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Record the new broker node (its certificate made here: its fingerprint is
 * what every host pins), the ports of the cluster's epmd and distribution
 * (the firewall opens them between broker nodes only), the first node's own
 * broker when not yet recorded; owe every changed node its declaration; and
 * write the hand-over file. Returns what changed and the file's path.
 */
export async function handOverBroker(
  o: Options,
  self: string,
  node: string,
  publicHost: string,
): Promise<{ changed: string[]; file: string }> {
  if (node === self) throw refuse('MSHD5', `${node} is the first node itself`);
  const firstAddress = o.brokerAddress!;
  const address = await overlayAddress(o, node);
  const p = paths(o);
  const made = await makeCertificate(publicHost, p.tls);
  const ownFingerprint = new X509Certificate(readFileSync(join(p.tls, 'broker.pem'))).fingerprint256;
  const changed: string[] = [];
  Object.assign(process.env, controlEnv(o));
  const ov = await connect('overlay', { max: 1 });
  try {
    await ov`select overlay.set_broker_ports(${o.ports.epmd}::int, ${o.ports.dist}::int)`;
  } finally {
    await ov.end();
  }
  // `mesh broker add`'s own function: the first node's broker first, with its node (the first add would otherwise record it without one).
  const mine = await brokerAdd(joinHostPort(o.publicHost, o.ports.amqps), ownFingerprint, self);
  if (mine.outcome !== 'unchanged') changed.push(`broker ${mine.address} (${self}) ${mine.outcome}`);
  const added = await brokerAdd(joinHostPort(publicHost, o.ports.amqps), made.fingerprint, node);
  changed.push(`broker ${added.address} (${node}) ${added.outcome} with its fingerprint ${added.fingerprint}`);
  // Every host's `brokers` and the broker nodes' firewalls changed: owed now (W2).
  const { redeclared: sent } = await redeclare();
  if (sent.length) changed.push(`${sent.length} declaration(s) owed (brokers, firewall)`);
  const file = p.handOver(node);
  await writeHandOver(file, {
    first: { name: self, erlNode: brokerNode(o), address: firstAddress },
    node: { name: node, address, public: publicHost },
    ports: { amqps: o.ports.amqps, amqp: o.ports.amqp, mgmt: o.ports.mgmt, epmd: o.ports.epmd, dist: o.ports.dist },
    cookie: readCookie(o),
    adminPassword: readFileSync(p.rabbitAdmin, 'utf8').trim(),
    cert: made.cert,
    key: made.key,
  });
  return { changed, file };
}
