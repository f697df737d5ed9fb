// Nodes pin the broker's certificate by its SHA-256 fingerprint. Node's TLS
// calls checkServerIdentity only after the chain verifies, so a self-signed
// broker needs its own certificate as the CA: we fetch it once, compare its
// fingerprint, then connect trusting exactly that certificate and checking the
// fingerprint again. Credentials are never sent to an unpinned peer.
import tls from 'node:tls';
import { isIP } from 'node:net';

export class PinMismatch extends Error {}

export interface Pinned {
  ca: string;
  checkServerIdentity: (host: string, cert: tls.PeerCertificate) => Error | undefined;
  servername?: string;
}

const norm = (fp: string) => fp.toUpperCase();

export function fetchCertificate(
  host: string,
  port: number,
  timeoutMs = 10_000,
  signal?: AbortSignal,
): Promise<tls.DetailedPeerCertificate> {
  return new Promise((resolve, reject) => {
    const sock = tls.connect({ host, port, rejectUnauthorized: false, servername: isIP(host) ? undefined : host });
    // An ended attempt leaves nothing behind: its timer would hold a stopping process for the whole timeout.
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      done();
      sock.destroy();
      reject(Object.assign(new Error('attempt ended (roused)'), { code: 'ABORTED' }));
    };
    const timer = setTimeout(() => {
      done();
      sock.destroy();
      reject(
        Object.assign(new Error(`no TLS answer from ${host}:${port} within ${timeoutMs / 1000}s`), {
          code: 'ETIMEDOUT',
        }),
      );
    }, timeoutMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    sock.once('secureConnect', () => {
      done();
      const cert = sock.getPeerCertificate(true);
      sock.destroy();
      resolve(cert);
    });
    sock.once('error', (err) => {
      done();
      reject(err);
    });
  });
}

export async function pin(
  host: string,
  port: number,
  fingerprint: string,
  timeoutMs?: number,
  signal?: AbortSignal,
): Promise<Pinned> {
  const cert = await fetchCertificate(host, port, timeoutMs, signal);
  if (norm(cert.fingerprint256) !== norm(fingerprint)) {
    throw new PinMismatch(
      `the broker at ${host}:${port} presented certificate ${cert.fingerprint256}, but this node pins ${fingerprint}: ` +
        'what answered is not the mesh this node joined. No retry will fix this; if the mesh replaced its certificate, enrol again with a new token.',
    );
  }
  const pem = `-----BEGIN CERTIFICATE-----\n${cert.raw.toString('base64').replace(/(.{64})/g, '$1\n')}\n-----END CERTIFICATE-----\n`;
  return {
    ca: pem,
    servername: isIP(host) ? undefined : host,
    checkServerIdentity: (_h, c) =>
      norm(c.fingerprint256) === norm(fingerprint)
        ? undefined
        : new PinMismatch(
            `the broker at ${host}:${port} changed certificate mid-connect (${c.fingerprint256}, pinned ${fingerprint}).`,
          ),
  };
}
