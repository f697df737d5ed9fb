// The control plane's own hops to the broker, from its home's broker.json:
// loopback AMQP and the management API, both as the admin account. Here, not
// in src/home/, so home stays below broker (the arrows only run down).
import type { BrokerConfig } from '../home/home.js';
import type { Endpoint } from './connect.js';
import type { Management } from './accounts.js';

export function adminEndpoint(b: BrokerConfig): Endpoint {
  return { host: b.amqp.host, port: b.amqp.port, vhost: b.vhost, user: b.user, password: b.password };
}

export function management(b: BrokerConfig): Management {
  return { url: b.management, user: b.user, password: b.password, vhost: b.vhost, accountPrefix: b.accountPrefix };
}
