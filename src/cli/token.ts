// `mesh token issue`: a machine's one-time enrolment token.
import type { Program } from '../sys/program.js';
import { emit } from './print.js';
import { issueToken } from '../inventory/token.js';

export function registerToken(p: Program): void {
  p.prog
    .command('token issue <name>')
    .describe([
      'Issue a one-time enrolment token for a new machine and print the line to paste on it: echo TOKEN | mesh-host enrol.',
      "The token reaches mesh-host on its standard input, never its command line, where the machine's other users could",
      "read it; it names the mesh's signing key, so the machine keeps no answer from anyone else.",
      'The name becomes its broker account and queue: a lower-case letter, then lower-case letters, digits or dashes.',
    ])
    .option('--site', 'Where the machine is; machines at one site may reach each other directly', 'default')
    .option('--dialable', 'HOST:PORT others can dial for its overlay; leave out when it is behind NAT')
    .option('--ttl', 'How long the token lives: 30m, 24h, 7d', '1h')
    .option('--json', 'Print as JSON')
    .example('token issue web1 --site lon --ttl 30m')
    .action(
      p.wrap(async (name: string, o: { site?: string; dialable?: string; ttl?: string; json?: boolean }) => {
        const r = await issueToken(String(name), { site: o.site, dialable: o.dialable, ttl: o.ttl });
        emit(r, o, (d) => d.command);
      }),
    );
}
