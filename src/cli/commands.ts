// The CLI's commands: each maps to one function that returns data; printing
// is here, as a table for a person or JSON with --json.
import type { Sade } from 'sade';
import { wrap } from './wrap.js';
import { emit, table } from './print.js';
import { issueToken } from '../commands/token.js';
import { nodeList, nodeRetire } from '../commands/node.js';
import { serve } from '../serve/serve.js';
import { ensureSigner, home } from '../control/home.js';

export function register(prog: Sade): void {
  prog.command('init')
    .describe('Make the control plane\'s signing key in MESH_HOME (default /etc/mesh) if it has none. An existing key is never replaced: it is the mesh\'s identity.')
    .option('--json', 'Print as JSON')
    .action(wrap(async (o: { json?: boolean }) => {
      const s = await ensureSigner();
      emit({ mesh: s.mesh, home: home() }, o, (d) => `mesh ${d.mesh} (signing key in ${d.home})`);
    }));

  prog.command('serve')
    .describe([
      'Run the control plane: consume the control queue and answer enrolments, record heards, reports and build results,',
      'each in one SQL transaction, acked only after it commits. Needs MESH_STORE_<CONTEXT> for every context and MESH_HOME.',
    ])
    .action(wrap(async () => {
      const stop = new AbortController();
      for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => stop.abort());
      await serve({ signal: stop.signal });
    }));

  prog.command('token issue <name>')
    .describe([
      'Issue a one-time enrolment token for a new machine and print the line to paste on it: mesh-host enrol <token>.',
      'The name becomes its broker account and queue: a lower-case letter, then lower-case letters, digits or dashes.',
    ])
    .option('--site', 'Where the machine is; machines at one site may reach each other directly', 'default')
    .option('--dialable', 'HOST:PORT others can dial for its overlay; leave out when it is behind NAT')
    .option('--ttl', 'How long the token lives: 30m, 24h, 7d', '1h')
    .option('--json', 'Print as JSON')
    .example('token issue web1 --site lon --ttl 30m')
    .action(wrap(async (name: string, o: { site?: string; dialable?: string; ttl?: string; json?: boolean }) => {
      const r = await issueToken(String(name), { site: o.site, dialable: o.dialable, ttl: o.ttl });
      emit(r, o, (d) => d.command);
    }));

  prog.command('node list')
    .describe('Every node: here, out of touch Nm, or never spoken, and the age of its last report. The same answer as select * from inventory.node_status.')
    .option('--json', 'Print as JSON')
    .action(wrap(async (o: { json?: boolean }) => {
      emit(await nodeList(), o, (rows) => table(rows, ['name', 'site', 'state', 'holds', 'failing', 'reported_serial', 'report_age']));
    }));

  prog.command('node retire <name>')
    .describe('Forget a node: remove its broker account (closing its connection), its queue, its keys and its last report.')
    .option('--json', 'Print as JSON')
    .action(wrap(async (name: string, o: { json?: boolean }) => emit(await nodeRetire(String(name)), o, (d) => `retired ${d.retired}`)));
}
