// Which node queues serve makes (W3 on a cluster): quorum wherever the broker
// is a cluster, whether serve names several nodes or only its own one over
// loopback with the bundle's word that it is clustered; classic on a broker
// alone. The bundle's broker.json says "cluster" exactly when the first
// node's broker was made a node of a cluster (--add-broker-node).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { management, adminEndpoints } from '../../src/broker/admin.js';
import { MeshError } from '../../src/sys/errors.js';
import { brokerConfig } from '../../bundle/control.js';
import { DEFAULT_PORTS, type Options } from '../../bundle/layout.js';
import type { BrokerConfig } from '../../src/home/home.js';

const test = suite('broker admin: node queue type');
const base: BrokerConfig = {
  amqp: { host: '127.0.0.1', port: 5672 },
  vhost: 'mesh',
  user: 'mesh-admin',
  password: 'p',
  management: 'http://127.0.0.1:15672',
  public: '198.51.100.7:5671',
  fingerprint: 'AA',
};
const o: Options = {
  state: '/var/lib/mesh',
  home: '/etc/mesh',
  hostDir: '/var/lib/mesh-host',
  name: 'hub',
  site: 'default',
  publicHost: '198.51.100.7',
  dialable: '198.51.100.7:51820',
  ports: DEFAULT_PORTS,
  roots: ['/etc'],
  hostEnv: {},
};
const secrets = { password: 'p', cert: '/c', key: '/k', fingerprint: 'AA' };

test('a broker alone: classic node queues', () => {
  assert.is(management(base).quorumNodeQueues, false);
});

test('several broker nodes named: quorum node queues', () => {
  assert.is(
    management({
      ...base,
      amqp: [
        { host: '127.0.0.1', port: 5672 },
        { host: '10.88.0.2', port: 5672 },
      ],
    }).quorumNodeQueues,
    true,
  );
});

test('one node named, said to be a node of a cluster: quorum node queues', () => {
  assert.is(management({ ...base, cluster: true }).quorumNodeQueues, true);
});

test('the bundle says "cluster" in broker.json once the first node\'s broker is a node of a cluster, and only then', () => {
  const alone = brokerConfig(o, secrets);
  assert.is(alone.cluster, undefined);
  assert.is(management(alone).quorumNodeQueues, false);
  const clustered = brokerConfig({ ...o, brokerAddress: '10.88.0.1', brokerName: 'hub' }, secrets);
  assert.is(clustered.cluster, true);
  assert.is(management(clustered).quorumNodeQueues, true);
});

const FP = Array.from({ length: 32 }, (_, i) => ((i * 7) % 256).toString(16).toUpperCase().padStart(2, '0')).join(':');

const hops = suite('broker admin: the hops broker.json names');

hops(
  "an entry with a fingerprint is dialled over TLS pinned to it; one without stays plaintext, in broker.json's order",
  () => {
    const eps = adminEndpoints({
      ...base,
      amqp: [
        { host: '10.88.0.3', port: 5671, fingerprint: FP },
        { host: '127.0.0.1', port: 5673 },
      ],
    });
    assert.equal(
      eps.map((e) => [e.host, e.port, e.fingerprint, e.user, e.password]),
      [
        ['10.88.0.3', 5671, FP, 'mesh-admin', 'p'],
        ['127.0.0.1', 5673, undefined, 'mesh-admin', 'p'],
      ],
    );
    assert.not.ok('fingerprint' in eps[1]!, 'a plaintext hop carries no fingerprint at all');
  },
);

const refused = (amqp: unknown, said: RegExp, code: string) => {
  try {
    adminEndpoints({ ...base, amqp } as BrokerConfig);
  } catch (err) {
    assert.instance(err, MeshError);
    assert.is((err as MeshError).code, code, (err as Error).message);
    assert.match((err as Error).message, said);
    return;
  }
  assert.unreachable(`${JSON.stringify(amqp)} was taken`);
};

hops('a fingerprint not in the SHA-256 form is refused naming the entry and where the right one is printed', () => {
  refused(
    [
      { host: '127.0.0.1', port: 5673 },
      { host: '10.88.0.3', port: 5671, fingerprint: FP.toLowerCase() },
    ],
    /"amqp" entry 2 \(10\.88\.0\.3:5671\) has a "fingerprint" that is not a SHA-256 fingerprint: .*mesh broker list/,
    'MSHJ3',
  );
  refused(
    { host: '10.88.0.3', port: 5671, fingerprint: 'AA:BB' },
    /broker\.json's "amqp" \(10\.88\.0\.3:5671\) has a "fingerprint"/,
    'MSHJ3',
  );
  refused([{ host: '10.88.0.3', port: 5671, fingerprint: 42 }], /not a SHA-256 fingerprint/, 'MSHJ3');
});

hops('an entry without a usable host or port, or not an object, is refused saying what to give', () => {
  refused(
    [{ host: '10.88.0.3', port: '5671' }],
    /"amqp" \(10\.88\.0\.3\) has no usable "port" \("5671"\): give a number from 1 to 65535/,
    'MSHJ2',
  );
  refused(
    [{ host: '127.0.0.1', port: 5673 }, { port: 5671 }],
    /entry 2 has no usable "host" \(undefined\): give the node's address/,
    'MSHJ1',
  );
  refused([{ host: 'a b', port: 5671 }], /no usable "host"/, 'MSHJ1');
  refused([{ host: '10.88.0.3', port: 70000 }], /no usable "port"/, 'MSHJ2');
  refused(['10.88.0.3:5671'], /is not a broker node: give \{"host": HOST, "port": PORT\}/, 'MSHJ0');
  refused([], /"amqp" is an empty list: there is no broker to connect to/, 'MSHJ4');
});

hops('a "management" that names no API is refused with MSHJ5, before any call is tried', () => {
  assert.throws(
    () => management({ ...base, management: [] }),
    (e: unknown) => e instanceof MeshError && e.code === 'MSHJ5' && /"management" is an empty list/.test(e.message),
  );
});

test.run();
hops.run();
