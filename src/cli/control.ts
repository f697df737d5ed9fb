// `mesh init`, `mesh migrate`, `mesh serve`: the control plane's own files,
// its store's schemas, and the control plane running.
import type { Program } from '../sys/program.js';
import { emit } from './print.js';
import { ensureSigner, home } from '../home/home.js';
import { promote, DEFAULT_PG_DATA } from '../store/promote.js';
import { DEFAULT_METRICS_LISTEN, parseMetricsListen } from '../serve/metrics_listen.js';
import { backup, restore, DEFAULT_BROKER_TLS } from './backup.js';
// migrate and serve are loaded when their command runs: every other
// command starts without node-pg-migrate, pg and amqplib (much of the CLI's
// start, which `mesh declare` would pay too).

export function registerControl(p: Program): void {
  initCommand(p);
  migrateCommand(p);
  promoteCommand(p);
  backupCommand(p);
  restoreCommand(p);
  serveCommand(p);
}

function initCommand(p: Program): void {
  p.prog
    .command('init')
    .describe(
      "Make the control plane's signing key in MESH_HOME (default /etc/mesh) if it has none. An existing key is never replaced: it is the mesh's identity.",
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) => {
        const s = await ensureSigner();
        emit({ mesh: s.mesh, home: home() }, o, (d) => `mesh ${d.mesh} (signing key in ${d.home})`);
      }),
    );
}

function migrateCommand(p: Program): void {
  p.prog
    .command('migrate')
    .describe([
      "Bring every context's schema up to date (inventory, catalogue, assignment, secret, provision, overlay, audit).",
      'Each context migrates as its own role from MESH_STORE_<CONTEXT>. Refuses, before anything runs, an edited',
      'migration that already ran, one numbered below one that ran, duplicate numbers, misnamed or empty files.',
      'Waits up to 3 minutes for a cold database (MESH_STORE_WAIT_SECONDS to change).',
    ])
    .option('--json', 'Print as JSON')
    .example('migrate')
    .action(
      p.wrap(async (o: { json?: boolean }) => {
        const { migrate } = await import('../store/migrate.js');
        const results = await migrate({ say: (l) => process.stderr.write(l + '\n') });
        const ran = results.flatMap((r) => r.ran.map((n) => `${r.context}/${n}`));
        emit({ ran }, o, (d) =>
          d.ran.length === 0 ? 'already up to date' : `applied ${d.ran.length}: ${d.ran.join(', ')}`,
        );
      }),
    );
}

function promoteCommand(p: Program): void {
  p.prog
    .command('store promote')
    .describe([
      "Make this machine's standby of the store the primary (pg_ctl promote, as postgres), and wait until it takes writes.",
      'Be sure the old primary is down and stays down first: mesh does not fence it. Every mesh program finds the new',
      'primary in its store host list (target_session_attrs=read-write) by itself.',
    ])
    .option('--data', `The standby's data directory (default ${DEFAULT_PG_DATA})`)
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { data?: string; json?: boolean }) => {
        const r = await promote({ data: o.data });
        emit(r, o, (d) => `${d.data} is the primary now`);
      }),
    );
}

function backupCommand(p: Program): void {
  p.prog
    .command('backup <file>')
    .describe([
      'Write the whole mesh to FILE (0600, written under a temporary name and renamed): one consistent pg_dump of every',
      "context's schema and rows, the signing key, this mesh's broker definitions (its vhost, queues and node accounts)",
      "and, where the bundle's broker keeps them, its TLS certificate and key, with a manifest of every member's sha256.",
      'Needs MESH_STORE_AUDIT_OWNER (the database superuser) as mesh migrate does. FILE holds the signing key: keep it as you keep that.',
    ])
    .option('--broker-tls', `The broker's certificate folder, taken when it exists (default ${DEFAULT_BROKER_TLS})`)
    .option('--json', 'Print as JSON')
    .example('backup /var/backups/mesh-$(date +%F).tar')
    .action(
      p.wrap(async (file: string, o: { json?: boolean; 'broker-tls'?: string }) => {
        const r = await backup(file, { brokerTls: o['broker-tls'] });
        emit(r, o, (d) => `backed up mesh ${d.mesh} to ${d.file} (${d.bytes} bytes, sha256 ${d.sha256})`);
      }),
    );
}

function restoreCommand(p: Program): void {
  p.prog
    .command('restore <file>')
    .describe([
      'Put a backup back on a freshly installed first node: every checksum is checked first, and a damaged or foreign',
      "file is refused with nothing touched. Then every context's schema is made again from the dump (in one",
      'transaction), brought up to this version (mesh migrate), the signing key put back, the broker definitions',
      "imported, and the broker's certificate put back where the bundle keeps it. Refuses a store with enrolled nodes",
      'unless --force. Start mesh serve after it: every node reconnects with its own identity, no token, and serve',
      'continues its serials above the newest it applied, however much older the backup is.',
    ])
    .option('--force', 'Replace a store that already holds a mesh')
    .option('--broker-tls', `The broker's certificate folder (default ${DEFAULT_BROKER_TLS})`)
    .option('--json', 'Print as JSON')
    .example('restore /var/backups/mesh-2026-01-31.tar')
    .action(
      p.wrap(async (file: string, o: { json?: boolean; force?: boolean; 'broker-tls'?: string }) => {
        const r = await restore(file, { force: o.force, brokerTls: o['broker-tls'] });
        emit(r, o, (d) =>
          [
            `restored mesh ${d.mesh} as it was at ${d.takenAt}: ${d.brokerAccounts} broker account(s)${d.migrated.length ? `, migrated ${d.migrated.join(', ')}` : ''}`,
            d.brokerTls
              ? "the broker's certificate was put back: restart the broker (systemctl restart mesh-rabbitmq), then start mesh serve"
              : 'start mesh serve: every node reconnects by itself',
          ].join('\n'),
        );
      }),
    );
}

function serveCommand(p: Program): void {
  p.prog
    .command('serve')
    .describe([
      'Run the control plane: consume the control queue and answer enrolments, record heards, reports and build results,',
      'each in one SQL transaction, acked only after it commits. Needs MESH_STORE_<CONTEXT> for every context and MESH_HOME.',
    ])
    .option(
      '--metrics',
      `ADDRESS:PORT for /metrics (Prometheus), /healthz and /readyz; by default MESH_SERVE_METRICS, else ${DEFAULT_METRICS_LISTEN} (loopback). Port 0 takes a free one`,
    )
    .example('serve')
    .example('serve --metrics 10.99.0.1:9780')
    .action(
      p.wrap(async (o: { metrics?: string }) => {
        const stop = new AbortController();
        for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
        const metrics = parseMetricsListen(o.metrics ?? process.env.MESH_SERVE_METRICS);
        const { serve } = await import('../serve/serve.js');
        await serve({ signal: stop.signal, metrics });
      }),
    );
}
