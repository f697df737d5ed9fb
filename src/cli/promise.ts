// `mesh promise add|list|remove`: assertions over the network, the firewall
// and the services that every change is checked against in its own
// transaction.
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { promiseAdd, promiseList, promiseRemove, type PromiseSpec } from '../assignment/promise.js';

export function registerPromise(p: Program): void {
  p.prog
    .command('promise add <name>')
    .describe([
      'Promise something of the fleet; every later change that would break it is refused before anything is committed or sent.',
      'One kind a promise: --site S --closed PORT (no node of site S opens PORT in its firewall); --node A --reaches B:PORT',
      "(A has an overlay path to B and B's firewall admits A on PORT); --module M --runs SERVICE (every node assigned M runs",
      'service SERVICE); --hubs N (at least N hubs). The changes checked: module add, assign and unassign, overlay hub,',
      'provision grant and revoke. A promise broken already is refused: make it true first. The rows are assignment.promise.',
    ])
    .option('--site', 'With --closed: the site none of whose nodes may open the port')
    .option('--closed', 'The port no node of --site may open')
    .option('--node', 'With --reaches: the node that must reach the peer')
    .option('--reaches', 'PEER:PORT the --node must reach')
    .option('--module', 'With --runs: the module whose every node runs the service')
    .option('--runs', 'The service every node of --module runs')
    .option('--hubs', 'The fewest hubs the overlay may have')
    .option('--json', 'Print as JSON')
    .example('promise add no-dmz-postgres --site dmz --closed 5432')
    .example('promise add web-db --node web1 --reaches db1:5433')
    .example('promise add web-nginx --module web --runs nginx')
    .example('promise add two-hubs --hubs 2')
    .action(
      p.wrap(async (name: string, o: Omit<PromiseSpec, 'name'> & { json?: boolean }) =>
        emit(
          await promiseAdd({ ...o, name: String(name) }),
          o,
          (r) => `promised ${r.name}: ${r.promise} (kept now; changes that break it are refused)`,
        ),
      ),
    );

  p.prog
    .command('promise list')
    .describe([
      'Every promise, what it says, and whether it is kept now; a broken one says what breaks it (something no checked',
      'change did, such as a node retired). The same answer as select * from assignment.promise_state.',
    ])
    .option('--json', 'Print as JSON')
    .example('promise list --json')
    .action(
      p.wrap(async (o: { json?: boolean }) =>
        emit(await promiseList(), o, (rows) => table(rows, ['name', 'state', 'promise', 'why'])),
      ),
    );

  p.prog
    .command('promise remove <name>')
    .describe('Take a promise back: changes are no longer checked against it.')
    .option('--json', 'Print as JSON')
    .example('promise remove two-hubs')
    .action(
      p.wrap(async (name: string, o: { json?: boolean }) =>
        emit(await promiseRemove(String(name)), o, (r) => `removed promise ${r.name}`),
      ),
    );
}
