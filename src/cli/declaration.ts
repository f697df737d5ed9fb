// `mesh assign|unassign|plan|declare`: what runs where, and the signed
// declaration each node is sent (one composing path: plan shows what declare sends).
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { mustBeSent } from './sent.js';
import { assign } from '../assignment/assign.js';
import { plan, declare } from '../assignment/declare.js';

export function registerDeclaration(p: Program): void {
  p.prog.command('assign <module> <node>')
    .describe('Run MODULE on NODE from the next declaration on (mesh declare NODE sends it).')
    .option('--json', 'Print as JSON')
    .action(p.wrap(async (m: string, n: string, o: { json?: boolean }) => emit(await assign(String(m), String(n), true), o, (d) => d.changed ? `assigned ${d.module} to ${d.node}` : `${d.module} was already assigned to ${d.node}`)));

  p.prog.command('unassign <module> <node>')
    .describe('Stop running MODULE on NODE: the next declaration leaves its resources out, and the node removes them.')
    .option('--json', 'Print as JSON')
    .action(p.wrap(async (m: string, n: string, o: { json?: boolean }) => emit(await assign(String(m), String(n), false), o, (d) => d.changed ? `unassigned ${d.module} from ${d.node}` : `${d.module} was not assigned to ${d.node}`)));

  p.prog.command('plan <node>')
    .describe('Show the declaration NODE would be sent next, without sending it. --json prints the exact body bytes `mesh declare` would sign.')
    .option('--json', 'Print the declaration body, byte for byte')
    .action(p.wrap(async (n: string, o: { json?: boolean }) => {
      const d = await plan(String(n));
      if (o.json) process.stdout.write(d.text + '\n');
      else console.log(`declaration ${d.serial} for ${n}:\n` + table(d.resources.map((r) => ({ id: r.id, kind: r.kind })), ['id', 'kind']));
    }));

  p.prog.command('declare [node]')
    .describe([
      'Compose, sign and send NODE its declaration (or every enrolled node with --all). Serial and digest are recorded in SQL',
      'before anything is published; each node gets it on its own queue, waiting there if it is away.',
    ])
    .option('--all', 'Every enrolled node')
    .option('--changed', 'Only nodes whose composed resources differ from their last declaration')
    .option('--json', 'Print as JSON')
    .example('declare web1')
    .example('declare --all --changed')
    .action(p.wrap(async (n: string | undefined, o: { all?: boolean; changed?: boolean; json?: boolean }) => {
      if (!n && !o.all) throw new Error('name a node, or --all for every enrolled node.');
      if (n && o.all) throw new Error('name a node or give --all, not both.');
      const r = await declare({ nodes: o.all ? undefined : [String(n)], changedOnly: o.changed });
      emit(r, o, (rows) => rows.length ? table(rows, ['node', 'serial', 'sent', 'error']) : 'nothing to declare: every node already holds its composition');
      mustBeSent(r);
    }));
}
