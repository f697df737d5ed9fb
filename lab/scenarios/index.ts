// Every lab scenario, in the order `all` runs them. Each leaves the lab up
// and every node connected, so any may run alone or after any other.
import type { Scenario } from './scenario.js';
import { join } from './join.js';
import { whatIf } from './what_if.js';
import { broker } from './broker.js';
import { away } from './away.js';
import { forged } from './forged.js';
import { drift } from './drift.js';
import { firewall } from './firewall.js';
import { cluster } from './cluster.js';

export const SCENARIOS: Scenario[] = [join, whatIf, broker, away, forged, drift, firewall, cluster];

export function scenario(name: string): Scenario {
  const s = SCENARIOS.find((x) => x.name === name);
  if (!s)
    throw new Error(`no scenario ${JSON.stringify(name)}: one of ${SCENARIOS.map((x) => x.name).join(', ')}, or all.`);
  return s;
}
