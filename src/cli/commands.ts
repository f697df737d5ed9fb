// The CLI's commands: each maps to one function that returns data; printing
// is here, as a table for a person or JSON with --json.
import type { Sade } from 'sade';
import { wrap } from './wrap.js';
import { emit, table } from './print.js';
import { issueToken } from '../inventory/token.js';
import { nodeList, nodeRetire } from '../inventory/node.js';
import { serve } from '../serve/serve.js';
import { ensureSigner, home } from '../home/home.js';
import { moduleAdd } from '../catalogue/module_add.js';
import { assign } from '../assignment/assign.js';
import { plan, declare } from '../assignment/declare.js';
import { registerOverlay } from './overlay.js';
import { registerSecret } from './secret.js';
import { registerBuild } from './build.js';
import { registerFirewall } from './firewall.js';

export function register(prog: Sade): void {
  registerOverlay(prog);
  registerSecret(prog);
  registerBuild(prog);
  registerFirewall(prog);

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

  prog.command('module add <file>')
    .describe([
      'Add or replace a module from a JSON file: {"name": "web", "resources": [...]}. Each resource has a kind (file, directory,',
      'service, container, wireguard, secret, or opening: a port the module serves, {"kind": "opening", "name", "proto", "port", "from": "any|site:S|module:M"}) and its fields; ids are filled in as kind:path or kind:name. Checked by the same',
      'parser every host runs, so a bad field is refused here, named, before any node sees it. The version moves only when the resources change.',
    ])
    .option('--json', 'Print as JSON')
    .example('module add web.json')
    .action(wrap(async (file: string, o: { json?: boolean }) => emit(await moduleAdd(String(file)), o, (d) => `module ${d.name} version ${d.version} (${d.resources} resources)`)));

  prog.command('assign <module> <node>')
    .describe('Run MODULE on NODE from the next declaration on (mesh declare NODE sends it).')
    .option('--json', 'Print as JSON')
    .action(wrap(async (m: string, n: string, o: { json?: boolean }) => emit(await assign(String(m), String(n), true), o, (d) => d.changed ? `assigned ${d.module} to ${d.node}` : `${d.module} was already assigned to ${d.node}`)));

  prog.command('unassign <module> <node>')
    .describe('Stop running MODULE on NODE: the next declaration leaves its resources out, and the node removes them.')
    .option('--json', 'Print as JSON')
    .action(wrap(async (m: string, n: string, o: { json?: boolean }) => emit(await assign(String(m), String(n), false), o, (d) => d.changed ? `unassigned ${d.module} from ${d.node}` : `${d.module} was not assigned to ${d.node}`)));

  prog.command('plan <node>')
    .describe('Show the declaration NODE would be sent next, without sending it. --json prints the exact body bytes `mesh declare` would sign.')
    .option('--json', 'Print the declaration body, byte for byte')
    .action(wrap(async (n: string, o: { json?: boolean }) => {
      const p = await plan(String(n));
      if (o.json) process.stdout.write(p.text + '\n');
      else console.log(`declaration ${p.serial} for ${n}:\n` + table(p.resources.map((r) => ({ id: r.id, kind: r.kind })), ['id', 'kind']));
    }));

  prog.command('declare [node]')
    .describe([
      'Compose, sign and send NODE its declaration (or every enrolled node with --all). Serial and digest are recorded in SQL',
      'before anything is published; each node gets it on its own queue, waiting there if it is away.',
    ])
    .option('--all', 'Every enrolled node')
    .option('--changed', 'Only nodes whose composed resources differ from their last declaration')
    .option('--json', 'Print as JSON')
    .example('declare web1')
    .example('declare --all --changed')
    .action(wrap(async (n: string | undefined, o: { all?: boolean; changed?: boolean; json?: boolean }) => {
      if (!n && !o.all) throw new Error('name a node, or --all for every enrolled node.');
      if (n && o.all) throw new Error('name a node or give --all, not both.');
      const r = await declare({ nodes: o.all ? undefined : [String(n)], changedOnly: o.changed });
      emit(r, o, (rows) => rows.length ? table(rows, ['node', 'serial', 'sent', 'error']) : 'nothing to declare: every node already holds its composition');
      if (r.some((d) => !d.sent)) throw Object.assign(new Error('some declarations were recorded but not sent: run mesh declare again for them.'), { exitCode: 3 });
    }));
}
