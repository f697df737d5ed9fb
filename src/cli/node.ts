// `mesh node list`, `mesh node show [--at]`, `mesh node retire`: the machines the mesh knows.
import { afterChange, redeclareLine } from './redeclare.js';
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { nodeList, nodeOutdated, nodeRetire, pageLimit } from '../inventory/node.js';
import { nodeAt, type NodeAt } from '../assignment/history.js';

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

export function registerNode(p: Program): void {
  p.prog
    .command('node list')
    .describe(
      'Every node: here, wedged (here, but a declaration delivered to it waits unapplied past inventory.wedge_setting), out of touch Nm, or never spoken; stale when the declaration it holds has expired (see mesh freshness); the age of its last report; and the mesh-host version its reports name (agent_version). The same answer as select * from inventory.fleet_page() (node_status with the declaration owed and how its agent stands). One page of it with --limit (1 to 1000 rows, in name order), the next page with --after and the last name printed; narrowed by --prefix (of the name), --site and --state, as the fleet page of mesh console is. With --outdated, only the nodes whose agent is outside the skew rule (the control plane speaks with its own minor and the one before, inventory.agent_skew), behind the control plane, or reporting no version, and why: select * from inventory.agent_versions where outdated.',
    )
    .option('--outdated', 'Only the nodes whose agent is outside the skew rule or behind the control plane, and why')
    .option('--limit', 'At most this many rows (1 to 1000), in name order: one page')
    .option('--after', 'Only the nodes named after this name: the next page starts after the last name printed')
    .option('--prefix', 'Only the nodes whose name starts with this')
    .option('--site', 'Only the nodes at this site')
    .option('--state', 'Only the nodes in this state: here, wedged, away (out of touch), never (never spoken) or stale')
    .option('--json', 'Print as JSON')
    .example('node list --outdated')
    .example('node list --state away --site rack1 --limit 100')
    .example('node list --limit 100 --after web0099 --json')
    .action(
      p.wrap(
        async (
          o: { json?: boolean; outdated?: boolean } & Record<'limit' | 'after' | 'prefix' | 'site' | 'state', unknown>,
        ) => {
          if (o.outdated) {
            emit(await nodeOutdated(), o, (rows) =>
              rows.length ? table(rows, ['name', 'agent_version', 'control_version', 'why']) : 'no node is outdated',
            );
            return;
          }
          const text = (v: unknown) => (v === undefined ? undefined : String(v));
          const filter = {
            limit: pageLimit(text(o.limit)),
            after: text(o.after),
            prefix: text(o.prefix),
            site: text(o.site),
            state: text(o.state),
          };
          emit(await nodeList(filter), o, (rows) =>
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
              'agent_version',
            ]),
          );
        },
      ),
    );

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
