// Things on loopback that answer a node's dial the way a broken network does,
// and an identity that points a real mesh-host at them. Each counts the
// connections it accepted: one attempt is one accepted connection (the node's
// pin check dials first and goes no further against these).
import { createServer, type Server, type Socket } from 'node:net';
import tls from 'node:tls';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { randomBytes } from 'node:crypto';
import { saveIdentity, type Identity } from '../../host/identity.js';
import { makeCertificate } from '../harness/rabbitmq.js';

/** refuse: closed at once (a broker restarting); hang: accepted and never answered (a socket dead after resume). */
export type Answer = 'refuse' | 'hang';

export interface FakeBroker {
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

function track(
  server: Server,
  onSocket: (s: Socket, n: number) => void,
): { accepted: () => number; close: () => Promise<void> } {
  const open = new Set<Socket>();
  let n = 0;
  server.on('connection', (s) => {
    n++;
    open.add(s);
    s.on('error', () => {});
    s.on('close', () => open.delete(s));
    onSocket(s, n);
  });
  return {
    accepted: () => n,
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

/** A TCP server whose n-th connection (from 1) gets answer(n). */
export async function fakeBroker(answer: (n: number) => Answer): Promise<FakeBroker> {
  const server = createServer();
  const t = track(server, (s, n) => {
    if (answer(n) === 'refuse') s.destroy();
  });
  const port = await listen(server);
  return { port, ...t };
}

/** A TLS server with a certificate of its own: what answers is not the mesh the node joined. */
export async function impostor(): Promise<FakeBroker & { fingerprint: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-impostor-'));
  const c = await makeCertificate(dir, 'mesh-broker');
  const server = tls.createServer({ cert: readFileSync(c.cert), key: readFileSync(c.key) });
  server.on('tlsClientError', () => {});
  const t = track(server, () => {});
  const port = await listen(server);
  const close = async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { port, fingerprint: c.fingerprint, accepted: t.accepted, close };
}

const key = () => randomBytes(32).toString('base64');

/** A state dir holding an identity that dials 127.0.0.1:port and pins `fingerprint`. */
export async function identityFor(port: number, fingerprint = 'AA:'.repeat(31) + 'AA'): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'mesh-host-link-'));
  const id: Identity = {
    v: 1,
    name: 'lap1',
    mesh: '0123456789abcdef',
    signingKey: key(),
    broker: { host: '127.0.0.1', port, vhost: 'v-none', user: 'none.lap1', fingerprint },
    brokers: [{ host: '127.0.0.1', port, fingerprint }],
    password: randomBytes(18).toString('base64url'),
    keys: { identity: key(), overlay: key(), sealing: key() },
  };
  await saveIdentity(dir, id);
  return dir;
}

/** Lines of a log matching re. */
export const lines = (out: string, re: RegExp) => out.split('\n').filter((l) => re.test(l));
