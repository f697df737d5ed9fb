// `mesh drift`: what hosts keep putting back, and what is fighting.
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { driftList, setFightingAfter } from '../inventory/drift.js';

export function registerDrift(p: Program): void {
  p.prog
    .command('drift')
    .describe([
      'Every resource a host put back: how often in the last hour and in all, and when last. A host checks what it holds',
      'against its declaration every 5 minutes, connected or not, and undoes a hand edit or a stopped service. One put back',
      'more than N times in an hour (mesh drift fighting-after N, default 3) is FIGHTING something on its machine: find the',
      'cron job or the other tool that keeps changing it. The same answer as select * from inventory.drift.',
    ])
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) => {
        emit(await driftList(), o, (rows) =>
          table(
            rows.map((r: Record<string, unknown>) => ({ ...r, fighting: r.fighting ? 'FIGHTING' : '' })),
            ['node', 'resource', 'last_hour', 'times', 'last_at', 'fighting'],
          ),
        );
      }),
    );

  p.prog
    .command('drift fighting-after <times>')
    .describe('Flag a resource as fighting once it was put back more than TIMES times within an hour (default 3).')
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (times: string, o: { json?: boolean }) => {
        emit(
          await setFightingAfter(Number(times)),
          o,
          (d) => `a resource put back more than ${d.fighting_after} times in an hour is fighting`,
        );
      }),
    );
}
