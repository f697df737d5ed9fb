// X1: the first node's table, loaded before the store and the broker listen:
// input closed except loopback, answers, the ICMP a network needs, ssh (so
// whoever runs the bundle over ssh is never locked out), the broker's TLS
// port and WireGuard. Rendered by the host's firewall driver, the one
// renderer: the declared firewall the mesh composes for this node later
// replaces it with the same base and what SQL derives (X2).
import type { FirewallRule } from '../src/wire/resources.js';
import { renderTable, listTable, loadFile } from '../host/apply/firewall.js';
import type { Ports } from './layout.js';

export const TABLE = 'inet mesh';

export function baseRules(ports: Ports): FirewallRule[] {
  return [
    { proto: 'tcp', port: ports.ssh, why: 'ssh' },
    { proto: 'tcp', port: ports.amqps, why: 'broker, TLS' },
    { proto: 'udp', port: ports.wg, why: 'WireGuard' },
  ];
}

export function ruleset(ports: Ports): string {
  return renderTable({ rules: baseRules(ports) });
}

/** Load the file when it changed or the table is missing; true when anything was loaded. */
export async function loadRuleset(file: string, fileChanged: boolean): Promise<boolean> {
  const present = (await listTable()) !== null;
  if (present && !fileChanged) return false;
  try {
    await loadFile(file);
  } catch (err) {
    throw new Error(`${(err as Error).message}. Is nftables installed (bundle/ensure-packages.sh first)?`, {
      cause: err,
    });
  }
  return true;
}
