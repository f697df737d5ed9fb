// Where the console listens: loopback unless the operator names another
// address (e.g. the first node's overlay address); never every interface by
// default, and 0.0.0.0 or :: only when typed out.
import { isIP } from 'node:net';
import { refuse } from '../sys/errors.js';

export const DEFAULT_LISTEN = '127.0.0.1:7780';

export interface Listen {
  host: string;
  port: number;
}

export function parseListen(s: string = DEFAULT_LISTEN): Listen {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)):(\d{1,5})$/.exec(s);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (!m || !host || !isIP(host) || !(port >= 0 && port <= 65535)) {
    throw refuse(
      'MSHF1',
      `--listen ${JSON.stringify(s)} is not ADDRESS:PORT`,
      `give an IP address and a port, e.g. ${DEFAULT_LISTEN} or [::1]:7780`,
    );
  }
  return { host, port };
}

/** The URL a browser on this machine (or the overlay) reaches a console listening there. */
export function consoleUrl(l: Listen, tls = false): string {
  return `${tls ? 'https' : 'http'}://${l.host.includes(':') ? `[${l.host}]` : l.host}:${l.port}`;
}
