// Where mesh serve answers /metrics, /healthz and /readyz: loopback unless
// the operator names another address; 0.0.0.0 or :: only when typed out. The
// first node's firewall does not admit the port (X1): an operator's Prometheus
// elsewhere reaches it over the overlay, through an opening a module declares.
import { isIP } from 'node:net';
import { refuse } from '../sys/errors.js';

export const DEFAULT_METRICS_LISTEN = '127.0.0.1:9780';

export interface Listen {
  host: string;
  port: number;
}

/** ADDRESS:PORT ([ADDRESS]:PORT for IPv6); port 0 takes a free one (serve says which). */
export function parseMetricsListen(s: string = DEFAULT_METRICS_LISTEN): Listen {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(s);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (!m || !host || !isIP(host) || !(port >= 0 && port <= 65535))
    throw refuse('MSHJ7', `the metrics address ${JSON.stringify(s)} is not ADDRESS:PORT`);
  return { host, port };
}
