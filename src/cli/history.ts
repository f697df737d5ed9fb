// `mesh node show NODE [--at TIME]` and `mesh diff [NODE] --from FROM --to TO`:
// what was declared at a time, and what changed between two.
import type { Program } from '../sys/program.js';
import { emit } from './print.js';
import { nodeAt, diff, type NodeAt } from '../assignment/history.js';
import { describeGroups } from '../assignment/plan_all.js';

const iso = (d: Date) => d.toISOString();
const ids = (rs: { id: string }[]) => rs.map((r) => `  ${r.id}`);

function nodeLines(n: NodeAt): string {
  return [
    n.declared
      ? `${n.node} at ${iso(n.at)}: declaration ${n.declared.serial} (issued ${iso(n.declared.issuedAt)}), ${n.declared.resources.length} resources`
      : `${n.node} at ${iso(n.at)}: not declared yet`,
    ...(n.declared ? ids(n.declared.resources) : []),
    n.applied
      ? n.applied.serial === n.declared?.serial
        ? `reported applied: the same declaration (at ${iso(n.applied.at)})`
        : `reported applied: declaration ${n.applied.serial} (at ${iso(n.applied.at)}), ${n.applied.resources.length} resources`
      : 'reported applied: nothing yet',
    ...(n.applied && n.applied.serial !== n.declared?.serial ? ids(n.applied.resources) : []),
  ].join('\n');
}

export function registerHistory(p: Program): void {
  p.prog
    .command('node show <name>')
    .describe([
      'What NAME was declared at a time (its newest declaration issued by then, every resource by id) and what it had',
      'reported applied by then. Every declaration is kept, so any time since the node was first declared has an answer.',
      'The same answer as select * from assignment.declared_at(array[NAME], TIME).',
    ])
    .option('--at', 'The time: a timestamp (2026-12-05 12:00, 2026-12-05T12:00:00Z) or an age (30m, 2h, 7d)', 'now')
    .option('--json', 'Print as JSON')
    .example('node show web1 --at "2026-12-05 12:00"')
    .example('node show web1 --at 2h --json')
    .action(
      p.wrap(async (name: string, o: { at?: string; json?: boolean }) =>
        emit(await nodeAt(String(name), String(o.at ?? 'now')), o, nodeLines),
      ),
    );

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
