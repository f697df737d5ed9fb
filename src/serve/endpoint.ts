// What mesh serve answers over HTTP, for Prometheus, load balancers and
// systemd: /metrics (the Prometheus text format), /healthz (the process
// answers: alive) and /readyz (it can do its work: every store reachable and
// migrated to the code's schema, the control queue consumed). On loopback
// unless the operator names another address (MESH_SERVE_METRICS or --metrics):
// the fleet's numbers are not for the internet, and the firewall admits the
// port only where a declaration opens it (X1).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServeMetrics } from './metrics.js';
import type { Stores } from './context.js';
import { migrationsBehind } from '../store/migrate.js';
import type { Context } from '../store/contexts.js';
import { refuse } from '../sys/errors.js';
import type { Listen } from './metrics_listen.js';

export interface Readiness {
  ready: boolean;
  /** One line a check: ok, or why not. */
  checks: Record<string, string>;
}

/** Each store answers and has run every migration of its folder; the broker's control queue is consumed. */
export async function readiness(stores: Stores, consuming: () => boolean): Promise<Readiness> {
  const checks: Record<string, string> = {};
  await Promise.all(
    Object.entries(stores).map(async ([ctx, sql]) => {
      try {
        const behind = await migrationsBehind(ctx as Context, sql);
        checks[`store ${ctx}`] = behind.length ? `migrations not run: ${behind.join(', ')} (mesh migrate)` : 'ok';
      } catch (err) {
        checks[`store ${ctx}`] = `unreachable: ${(err as Error).message}`;
      }
    }),
  );
  checks.broker = consuming() ? 'ok' : 'not consuming mesh.control (the broker cannot be reached)';
  return { ready: Object.values(checks).every((c) => c === 'ok'), checks };
}

export interface Endpoint {
  /** ADDRESS:PORT it listens on (the port chosen when 0 was asked). */
  address: string;
  stop(): Promise<void>;
}

export async function startEndpoint(
  listen: Listen,
  metrics: ServeMetrics,
  ready: () => Promise<Readiness>,
): Promise<Endpoint> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, type: string, body: string) => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, 'text/plain', 'GET only\n');
    if (path === '/healthz') return answer(200, 'text/plain', 'alive\n');
    if (path === '/readyz') {
      void ready().then(
        (r) => answer(r.ready ? 200 : 503, 'application/json', `${JSON.stringify(r)}\n`),
        (err) => answer(503, 'text/plain', `not ready: ${(err as Error).message}\n`),
      );
      return;
    }
    if (path === '/metrics') {
      void metrics.text().then(
        (t) => answer(200, metrics.registry.contentType, t),
        (err) => answer(503, 'text/plain', `the fleet could not be read: ${(err as Error).message}\n`),
      );
      return;
    }
    answer(404, 'text/plain', 'not found: /metrics, /healthz, /readyz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err) =>
      reject(
        refuse(
          'MSHJ8',
          `cannot serve metrics on ${listen.host}:${listen.port} (${err.message})`,
          'name a free ADDRESS:PORT with --metrics or MESH_SERVE_METRICS (each serve on a machine needs its own)',
          err,
        ),
      ),
    );
    server.listen(listen.port, listen.host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  return {
    address: `${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
