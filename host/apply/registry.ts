// Which driver handles which kind. A kind missing here is not a crash: the
// engine fails that one resource and says so. Another driver joins with one
// line: `registerDriver(myDriver)` (or a line in the list below).
import type { ResourceKind } from '../../src/wire/resources.js';
import type { Driver } from './driver.js';
import { directoryDriver } from './directory.js';
import { fileDriver } from './file.js';
import { secretDriver } from './secret.js';
import { containerDriver } from './container.js';
import { serviceDriver } from './service.js';
import { wireguardDriver } from './wireguard/driver.js';
import { firewallDriver } from './firewall.js';
import { brokersDriver } from './brokers.js';
import { agentDriver } from './agent.js';
import { packageDriver } from './package.js';

// Drivers are contravariant in their resource type; the engine only ever
// hands a driver resources of its own kind.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyDriver = Driver<any>;

export const drivers = new Map<ResourceKind, AnyDriver>();

export function registerDriver(d: AnyDriver): void {
  drivers.set(d.kind, d);
}

for (const d of [
  firewallDriver,
  directoryDriver,
  fileDriver,
  secretDriver,
  wireguardDriver,
  containerDriver,
  serviceDriver,
  brokersDriver,
  agentDriver,
  packageDriver,
] as AnyDriver[])
  registerDriver(d);
