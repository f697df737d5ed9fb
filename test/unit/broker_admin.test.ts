// Which node queues serve makes (W3 on a cluster): quorum wherever the broker
// is a cluster, whether serve names several nodes or only its own one over
// loopback with the bundle's word that it is clustered; classic on a broker
// alone. The bundle's broker.json says "cluster" exactly when the first
// node's broker was made a node of a cluster (--add-broker-node).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { management } from '../../src/broker/admin.js';
import { brokerConfig } from '../../bundle/control.js';
import { DEFAULT_PORTS, type Options } from '../../bundle/layout.js';
import type { BrokerConfig } from '../../src/home/home.js';

const test = suite('broker admin: node queue type');
const base: BrokerConfig = {
  amqp: { host: '127.0.0.1', port: 5672 }, vhost: 'mesh', user: 'mesh-admin', password: 'p',
  management: 'http://127.0.0.1:15672', public: '198.51.100.7:5671', fingerprint: 'AA',
};
const o: Options = {
  state: '/var/lib/mesh', home: '/etc/mesh', hostDir: '/var/lib/mesh-host', name: 'hub', site: 'default',
  publicHost: '198.51.100.7', dialable: '198.51.100.7:51820', ports: DEFAULT_PORTS, roots: ['/etc'], hostEnv: {},
};
const secrets = { password: 'p', cert: '/c', key: '/k', fingerprint: 'AA' };

test('a broker alone: classic node queues', () => {
  assert.is(management(base).quorumNodeQueues, false);
});

test('several broker nodes named: quorum node queues', () => {
  assert.is(management({ ...base, amqp: [{ host: '127.0.0.1', port: 5672 }, { host: '10.88.0.2', port: 5672 }] }).quorumNodeQueues, true);
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

test.run();
