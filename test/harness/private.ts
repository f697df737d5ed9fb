// Servers of a suite's own, for suites that stop, kill or restart them: the
// shared ones serve every other suite running at the same time.
import { mkdtempSync, chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import postgres from 'postgres';
import { startPostgres, type Postgres } from './postgres.js';
import { startRabbit, type Rabbit } from './rabbitmq.js';
import { prepareTemplate } from './store.js';
import type { Servers } from './servers.js';

export interface Private { servers: Servers; pg: Postgres; rabbit: Rabbit; stop(): Promise<void> }

export async function privateServers(): Promise<Private> {
  const tmp = mkdtempSync(join(tmpdir(), 'mesh-private-'));
  chmodSync(tmp, 0o755);
  const [pg, rabbit] = await Promise.all([startPostgres(join(tmp, 'pg')), startRabbit(join(tmp, 'rabbit'))]);
  const admin = postgres(pg.url('postgres'), { max: 1, onnotice: () => {} });
  const template = await prepareTemplate(admin, pg);
  await admin.end();
  const servers: Servers = {
    tmp,
    pg: { port: pg.port, socketDir: pg.socketDir },
    rabbit: { dir: join(tmp, 'rabbit'), amqpPort: rabbit.amqpPort, amqpsPort: rabbit.amqpsPort, mgmtPort: rabbit.mgmtPort, admin: rabbit.admin, fingerprint: rabbit.fingerprint, certPath: rabbit.certPath, nodename: rabbit.nodename },
    template,
  };
  return {
    servers, pg, rabbit,
    async stop() {
      await Promise.allSettled([pg.stop(), rabbit.stop()]);
      rmSync(tmp, { recursive: true, force: true });
    },
  };
}
