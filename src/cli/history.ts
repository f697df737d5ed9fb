// `mesh diff [NODE] --from FROM --to TO`: what changed in the declarations
// between two times (`mesh node show NODE --at TIME` is in node.ts).
import type { Program } from '../sys/program.js';
import { emit } from './print.js';
import { diff } from '../assignment/history.js';
import { describeGroups } from '../assignment/plan_all.js';

const iso = (d: Date) => d.toISOString();

export function registerHistory(p: Program): void {
  p.prog
    .command('diff [node]')
    .describe([
      'What changed in the declarations between two times, as mesh plan --all says it: each resource added, changed or',
      'removed, and the services that restarted because of it; nodes with the same changes on one line. With NODE, that node',
      'alone; without, every node. The same answer as select * from assignment.declared_changes(NODES, FROM, TO).',
    ])
    .option('--from', 'The earlier time: a timestamp or an age (2h)')
    .option('--to', 'The later time: a timestamp or an age', 'now')
    .option('--json', 'Print as JSON (each node and its changes)')
    .example('diff web1 --from "2026-12-05 09:00" --to "2026-12-05 12:00"')
    .example('diff --from 1d')
    .action(
      p.wrap(async (node: string | undefined, o: { from?: string; to?: string; json?: boolean }) => {
        const d = await diff(
          node === undefined ? undefined : String(node),
          o.from === undefined ? '' : String(o.from),
          String(o.to ?? 'now'),
        );
        emit(d, o, (x: typeof d) =>
          x.groups.length
            ? describeGroups(x.groups)
            : `nothing declared differently at ${iso(x.to)} than at ${iso(x.from)}`,
        );
      }),
    );
}
