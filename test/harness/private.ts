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
import { leave, suiteDir } from './leftovers.js';

export interface Private {
  servers: Servers;
  pg: Postgres;
  rabbit: Rabbit;
  stop(): Promise<void>;
}

/**
 * One PostgreSQL and one RabbitMQ under TMP, with the template database made:
 * the run's shared pair (test/run.ts) and a suite's private pair alike. If one
 * fails to start, the other is stopped: nothing is left running.
 */
export async function startServers(tmp: string): Promise<Private> {
  const [p, r] = await Promise.allSettled([startPostgres(join(tmp, 'pg')), startRabbit(join(tmp, 'rabbit'))]);
  const stop = async () => {
    await Promise.allSettled([p.status === 'fulfilled' && p.value.stop(), r.status === 'fulfilled' && r.value.stop()]);
  };
  try {
    if (p.status === 'rejected') throw p.reason;
    if (r.status === 'rejected') throw r.reason;
    const pg = p.value,
      rabbit = r.value;
    const admin = postgres(pg.url('postgres'), { max: 1, onnotice: () => {} });
    const template = await prepareTemplate(admin, pg).finally(() => admin.end());
    const servers: Servers = {
      tmp,
      pg: { port: pg.port, socketDir: pg.socketDir },
      rabbit: {
        dir: join(tmp, 'rabbit'),
        amqpPort: rabbit.amqpPort,
        amqpsPort: rabbit.amqpsPort,
        mgmtPort: rabbit.mgmtPort,
        admin: rabbit.admin,
        fingerprint: rabbit.fingerprint,
        certPath: rabbit.certPath,
        nodename: rabbit.nodename,
        ctlEnv: rabbit.ctlEnv,
      },
      template,
    };
    return { servers, pg, rabbit, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export async function privateServers(): Promise<Private> {
  const tmp = mkdtempSync(join(tmpdir(), 'mesh-private-'));
  chmodSync(tmp, 0o755); // the postgres user must reach its data dir below
  const s = await startServers(tmp);
  leave({ kind: 'servers', dir: tmp, pgPort: s.pg.port });
  return {
    ...s,
    async stop() {
      await s.stop();
      // Under the run it lies in the suite's dir: removed when the suite passed, kept and named when it failed.
      if (!suiteDir()) rmSync(tmp, { recursive: true, force: true });
    },
  };
}
