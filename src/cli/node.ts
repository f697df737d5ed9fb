// `mesh node list`, `mesh node retire`: the machines the mesh knows.
import { afterChange, redeclareLine } from './redeclare.js';
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { nodeList, nodeRetire } from '../inventory/node.js';

export function registerNode(p: Program): void {
  p.prog
    .command('node list')
    .describe(
      'Every node: here, wedged (here, but a declaration delivered to it waits unapplied past inventory.wedge_setting), out of touch Nm, or never spoken; stale when the declaration it holds has expired (see mesh freshness); and the age of its last report. The same answer as select * from inventory.node_status.',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) => {
        emit(await nodeList(), o, (rows) =>
          table(rows, [
            'name',
            'site',
            'state',
            'stale',
            'holds',
            'failing',
            'reported_serial',
            'report_age',
            'owed_serial',
          ]),
        );
      }),
    );

  p.prog
    .command('node retire <name>')
    .describe(
      'Forget a node: remove its broker account (closing its connection), its queue, its keys and its last report.',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (name: string, o: { json?: boolean }) =>
        emit(
          await afterChange(await nodeRetire(String(name))),
          o,
          (d) => `retired ${d.retired}\n${redeclareLine(d.redeclared, d)}`,
        ),
      ),
    );
}
