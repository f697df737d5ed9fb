// `mesh firewall show|ssh-port`: what each node admits and why (X1, X2).
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { firewallShow, firewallRows } from '../assignment/firewall.js';
import { setSshPort } from '../overlay/firewall.js';
import { refuse } from '../sys/errors.js';
import { isPort } from '../wire/names.js';

export function registerFirewall(p: Program): void {
  p.prog
    .command('firewall show <node>')
    .describe([
      "What NODE's firewall admits and why, as its next declaration carries it (the table inet mesh, input dropped by default).",
      "Every opening is derived from what the mesh knows: ssh, WireGuard on a dialable node, a provision's consumers reaching",
      'its provider over the overlay, and ports modules serve ("opening" entries in a module file, from any, site:S or module:M).',
      'The same answer as select * from assignment.firewall_opening where node = NODE.',
    ])
    .option('--json', 'Print as JSON')
    .example('firewall show hub')
    .action(
      p.wrap(async (node: string, o: { json?: boolean }) => {
        const f = await firewallShow(String(node));
        emit(
          f,
          o,
          (d) =>
            `${d.node}: input dropped unless ${d.base.join('; ')}; or\n` +
            table(firewallRows(d), ['port', 'from', 'via', 'origin', 'why']),
        );
      }),
    );

  p.prog
    .command('firewall ssh-port <port>')
    .describe(
      "The ssh port every node's firewall keeps open (default 22), so an operator over ssh is never locked out. Takes effect at mesh declare --all --changed.",
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (port: string, o: { json?: boolean }) => {
        const n = Number(port);
        if (!isPort(n)) throw refuse('MSH65', `${JSON.stringify(port)} is not a port number`);
        emit(
          await setSshPort(n),
          o,
          (d) => `every firewall keeps ssh port ${d.sshPort} open from the next declaration on`,
        );
      }),
    );
}
