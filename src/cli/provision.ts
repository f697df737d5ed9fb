// `mesh provision root|offer|grant|revoke|list|holders` (S2, S5): what a
// module provides, to which consumers, one credential a pair.
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { afterChange, redeclareLine } from './redeclare.js';
import { sentLine } from './sent.js';
import { setRoot, offer, grant, revoke, provisionList, holders } from '../provision/grants.js';
import { refuse } from '../sys/errors.js';

export function registerProvision(p: Program): void {
  for (const command of [rootCommand, offerCommand, grantCommand, revokeCommand, listingCommand, holdersCommand])
    command(p);
}

function rootCommand(p: Program): void {
  p.prog
    .command('provision root [path]')
    .describe(
      'Show or set where binds and secrets are written on nodes (default /etc/mesh/provision). Each host must list it in MESH_HOST_ROOTS.',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (path: string | undefined, o: { json?: boolean }) =>
        emit(await setRoot(path ? String(path) : undefined), o, (d) => d.root),
      ),
    );
}

function offerCommand(p: Program): void {
  p.prog
    .command('provision offer <name>')
    .describe([
      'Say that module --provider provides NAME: a PostgreSQL server (--kind postgres --host H --port P, the address consumers',
      'connect to) or routes through a reverse proxy (--kind route). Every node running the provider gets a directory,',
      '<root>/provides/NAME/, with one CONSUMER.binds (and CONSUMER.secret for postgres) per consumer.',
    ])
    .option('--kind', 'postgres or route')
    .option('--provider', 'The module that provides it')
    .option('--host', 'postgres: the host consumers connect to')
    .option('--port', 'postgres: the port consumers connect to')
    .option('--json', 'Print as JSON')
    .example('provision offer appdb --kind postgres --provider pg --host db1.mesh --port 5432')
    .action(
      p.wrap(
        async (name: string, o: { kind?: string; provider?: string; host?: string; port?: number; json?: boolean }) => {
          if (!o.kind || !o.provider) throw refuse('MSHB0', 'an offer without --kind or --provider');
          emit(
            await offer(String(name), { kind: o.kind, provider: o.provider, host: o.host, port: o.port }),
            o,
            (d) => `${d.provision}: ${d.kind} provided by ${d.provider}`,
          );
        },
      ),
    );
}

function grantCommand(p: Program): void {
  p.prog
    .command('provision grant <provision> <consumer>')
    .describe([
      'Let module CONSUMER use PROVISION. postgres: the pair gets its own role and database (--user, --database) and its own',
      'credential, written on the consumer as <root>/uses/CONSUMER/PROVISION.{binds,secret} and on the provider as',
      '<root>/provides/PROVISION/CONSUMER.{binds,secret}. route: the consumer supplies --port (where it listens) and receives',
      '--name (what the proxy serves). When both ends already run somewhere, the credential is made and both are sent now.',
    ])
    .option('--database', 'postgres: the database name (default the consumer, dashes as underscores)')
    .option('--user', "postgres: the role name, this pair's alone (default CONSUMER_PROVISION)")
    .option('--name', 'route: the host name the proxy serves')
    .option('--port', 'route: the port the consumer listens on')
    .option('--json', 'Print as JSON')
    .example('provision grant appdb billing --database billing')
    .example('provision grant web shop --name shop.example.org --port 8080')
    .action(
      p.wrap(
        async (
          p: string,
          c: string,
          o: { database?: string; user?: string; name?: string; port?: number; json?: boolean },
        ) => {
          const r = await afterChange(await grant(String(p), String(c), o));
          emit(
            r,
            o,
            (d) =>
              `granted ${d.provision} to ${d.consumer}${d.credential ? `; credential generation ${d.credential.generation}, ${sentLine(d.sent)}` : ''}${d.note ? `\n${d.note}` : ''}\n${redeclareLine(d.redeclared, d)}`,
          );
        },
      ),
    );
}

function revokeCommand(p: Program): void {
  p.prog
    .command('provision revoke <provision> <consumer>')
    .describe(
      'Remove one pair and forget its credential. The next declaration of either end removes its files (mesh declare).',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (p: string, c: string, o: { json?: boolean }) =>
        emit(
          await afterChange(await revoke(String(p), String(c))),
          o,
          (d) =>
            `${d.revoked ? `revoked ${d.provision} from ${d.consumer}` : `${d.consumer} was not granted ${d.provision}`}\n${redeclareLine(d.redeclared, d)}`,
        ),
      ),
    );
}

function listingCommand(p: Program): void {
  p.prog
    .command('provision list')
    .describe(
      'Every pair: what is provided, by which module, to which consumer, which nodes hold its credential, its generation, and the holders a rotation still waits for (the provider accepts the old credential until none is left). The same answer as select * from provision.grant_status.',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) =>
        emit(await provisionList(), o, (rows) =>
          table(
            rows.map((r: Record<string, unknown>) => ({
              ...r,
              holders: (r.holders as string[]).join(','),
              waiting_for: (r.waiting_for as string[]).join(','),
            })),
            ['provision', 'kind', 'provider', 'consumer', 'holders', 'generation', 'waiting_for'],
          ),
        ),
      ),
    );
}

function holdersCommand(p: Program): void {
  p.prog
    .command('provision holders <provision> <consumer>')
    .describe(
      "Who holds one pair's credential (provision.affected_holders): the nodes a rotation sends to, and whether each can be resolved.",
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (p: string, c: string, o: { json?: boolean }) =>
        emit(await holders(String(p), String(c)), o, (rows) =>
          table(
            rows.map((r: Record<string, unknown>) => ({ ...r, sides: (r.sides as string[]).join(',') })),
            ['node', 'sides', 'resolvable'],
          ),
        ),
      ),
    );
}
