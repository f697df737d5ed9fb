// `mesh advisories`: the nodes running a package version an advisory says is affected.
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { affectedNodes, loadAdvisories } from '../inventory/advisories.js';

export function registerAdvisories(p: Program): void {
  p.prog
    .command('advisories')
    .describe([
      'Every node running a Debian package at a version a loaded advisory says is affected, and the version that fixes it.',
      'Hosts report their installed packages (dpkg status) as they change; versions compare as dpkg compares them. Load',
      'advisories first with mesh advisories load FILE. The same answer as select * from inventory.advisory_node.',
    ])
    .option('--advisory', 'Only this advisory (its OSV id)')
    .option('--json', 'Print as JSON')
    .example('advisories --advisory DSA-5532-1')
    .action(
      p.wrap(async (o: { advisory?: string; json?: boolean }) => {
        emit(await affectedNodes(o.advisory), o, (rows) =>
          table(rows, ['advisory', 'node', 'name', 'arch', 'version', 'fixed']),
        );
      }),
    );

  p.prog
    .command('advisories load <file>')
    .describe([
      'Load advisories in the OSV format from FILE (one document, or a list of them); nothing is fetched from the network.',
      'The affected entries of a Debian ecosystem (Debian, Debian:12) are read: their ECOSYSTEM ranges (introduced, fixed,',
      'last_affected) and versions lists. An advisory loaded again replaces the one before.',
    ])
    .option('--json', 'Print as JSON')
    .example('advisories load DSA-5532-1.json')
    .action(
      p.wrap(async (file: string, o: { json?: boolean }) => {
        emit(await loadAdvisories(file), o, (rows) =>
          rows.map((r: { id: string; ranges: number }) => `loaded ${r.id}: ${r.ranges} affected range(s)`).join('\n'),
        );
      }),
    );
}
