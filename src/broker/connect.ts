// One way to open an AMQP connection, for every program. Credentials go in the
// options object, never in a URL string that could end up in a log.
import amqp from 'amqplib';
import { pin } from './pin.js';

export interface Endpoint {
  host: string;
  port: number;
  vhost: string;
  user: string;
  password: string;
  /** Set for TLS: the certificate fingerprint to pin. Unset: plaintext (loopback only). */
  fingerprint?: string;
}

export type Connection = amqp.ChannelModel;

export async function connectBroker(
  ep: Endpoint,
  opts: { timeoutMs?: number; name?: string; signal?: AbortSignal } = {},
): Promise<Connection> {
  const timeout = opts.timeoutMs ?? 15_000;
  const base = {
    hostname: ep.host,
    port: ep.port,
    vhost: ep.vhost,
    username: ep.user,
    password: ep.password,
    heartbeat: 15,
  };
  const clientProperties = { connection_name: opts.name ?? 'mesh' };
  let opening: Promise<Connection>;
  if (ep.fingerprint) {
    const pinned = await pin(ep.host, ep.port, ep.fingerprint, timeout, opts.signal);
    opening = amqp.connect({ ...base, protocol: 'amqps' }, { ...pinned, timeout, clientProperties });
  } else {
    opening = amqp.connect({ ...base, protocol: 'amqp' }, { timeout, clientProperties });
  }
  return abortable(opening, opts.signal);
}

// amqplib cannot abort a connect: race it, and close whatever arrives late.
function abortable(p: Promise<Connection>, signal?: AbortSignal): Promise<Connection> {
  if (!signal) return p;
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      reject(Object.assign(new Error('attempt ended (roused)'), { code: 'ABORTED' }));
      p.then(
        (c) => c.close().catch(() => {}),
        () => {},
      );
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (c) => {
        signal.removeEventListener('abort', onAbort);
        if (signal.aborted) {
          c.close().catch(() => {});
        } else resolve(c);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
