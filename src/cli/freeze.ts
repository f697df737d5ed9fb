// `mesh freeze add|list|override|remove`: change-freeze windows, inside which
// changes are held as a rollout holds them and go out when the window ends.
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { freezeAdd, freezeList, freezeOverride, freezeRemove } from '../assignment/freeze.js';
import { afterChange, redeclareLine } from './redeclare.js';
import { refuse } from '../sys/errors.js';

/** A window's id as the operator typed it: a whole number, else no window has it. */
const idOf = (id: unknown) => {
  if (!/^[0-9]{1,15}$/.test(String(id))) throw refuse('MSHB6', `no freeze ${String(id)}: an id is a whole number`);
  return Number(id);
};

const iso = (d: Date | null) => (d ? d.toISOString() : '-');

export function registerFreeze(p: Program): void {
  p.prog
    .command('freeze add')
    .describe([
      'A change-freeze window: from --from until --until, a changed composition of a node it covers is held as a rollout',
      'holds it (the node keeps what it has; mesh plan says "held by freeze F until T") and goes out when the window ends:',
      'mesh serve declares it then, by itself. Covers every node, or those of --site, or those assigned --module, or both.',
      'A node never declared still gets its first declaration. The windows are assignment.freeze in SQL.',
    ])
    .option('--from', 'When it opens: a timestamp (2026-12-24 00:00) or an age (0s: now)', '0s')
    .option('--until', 'When it closes: a timestamp (2026-12-27 00:00)')
    .option('--site', 'Only the nodes of this site')
    .option('--module', 'Only the nodes assigned this module')
    .option('--json', 'Print as JSON')
    .example('freeze add --from "2026-12-24 00:00" --until "2026-12-27 00:00"')
    .example('freeze add --until "2026-12-05 18:00" --site dmz --module web')
    .action(
      p.wrap(async (o: { from?: string; until?: string; site?: string; module?: string; json?: boolean }) =>
        emit(
          await freezeAdd({
            from: String(o.from ?? '0s'),
            until: o.until === undefined ? '' : String(o.until),
            site: o.site === undefined ? undefined : String(o.site),
            module: o.module === undefined ? undefined : String(o.module),
          }),
          o,
          (f) =>
            `freeze ${f.id} from ${iso(f.from_at)} until ${iso(f.until_at)}${f.site ? ` at site ${f.site}` : ''}${f.module ? ` on module ${f.module}` : ''}: ${f.state}`,
        ),
      ),
    );

  p.prog
    .command('freeze list')
    .describe([
      'Every change-freeze window: when, where, waiting, holding, ended or overridden (and why), and how many nodes it holds',
      'now. The same answer as select * from assignment.freeze_status.',
    ])
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) =>
        emit(await freezeList(), o, (rows) =>
          table(rows, ['id', 'from_at', 'until_at', 'site', 'module', 'state', 'holds', 'override_reason']),
        ),
      ),
    );

  p.prog
    .command('freeze override <id>')
    .describe([
      'End a window now and send what it held: an explicit act with a reason, which the history records (mesh log --kind',
      'freeze).',
    ])
    .option('--reason', 'Why the window is ended early (required)')
    .option('--json', 'Print as JSON')
    .example('freeze override 3 --reason "security fix for the web servers"')
    .action(
      p.wrap(async (id: string, o: { reason?: string; json?: boolean }) =>
        emit(
          await afterChange(await freezeOverride(idOf(id), o.reason === undefined ? '' : String(o.reason))),
          o,
          (d) => `freeze ${d.id} overridden (${d.reason})\n${redeclareLine(d.redeclared, d)}`,
        ),
      ),
    );

  p.prog
    .command('freeze remove <id>')
    .describe('Take a window back; what it held goes out now, unless another window or a rollout still holds it.')
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (id: string, o: { json?: boolean }) =>
        emit(
          await afterChange(await freezeRemove(idOf(id))),
          o,
          (d) => `removed freeze ${d.id}\n${redeclareLine(d.redeclared, d)}`,
        ),
      ),
    );
}
