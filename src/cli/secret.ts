// The `mesh` commands of the secret and provision areas (S1-S5). Registered
// from src/cli/commands.ts. Values never pass through argv or env: an accepted
// value is read from a file or stdin, a made one never leaves the process
// that seals it.
import type { Sade } from 'sade';
import { wrap } from './wrap.js';
import { emit, table } from './print.js';
import { rotate } from '../secret/rotate.js';
import { remake } from '../secret/remake.js';
import { placeSecret, secretList } from '../secret/accept.js';
import { setRoot, offer, grant, revoke, provisionList, holders } from '../provision/grants.js';
import type { Declared } from '../assignment/declare.js';

const list = (v: unknown): string[] => (v === undefined ? [] : (Array.isArray(v) ? v : [v]).flatMap((x) => String(x).split(',')).filter(Boolean));
const sentLine = (sent: Declared[]) => sent.map((d) => `${d.node} serial ${d.serial}${d.sent ? '' : ` NOT SENT (${d.error})`}`).join(', ');
function mustBeSent(sent: Declared[]) {
  if (sent.some((d) => !d.sent)) throw Object.assign(new Error('some declarations were recorded but not sent: run mesh declare for them.'), { exitCode: 3 });
}

export function registerSecret(prog: Sade): void {
  prog.command('secret list')
    .describe('Every secret the mesh holds sealed: made or accepted, its generation, its holders, and whose copy is stale (sealed to a key the node no longer has). Never a value: the mesh cannot read one.')
    .option('--json', 'Print as JSON')
    .action(wrap(async (o: { json?: boolean }) => emit(await secretList(), o, (rows) => table(rows, ['name', 'origin', 'generation', 'holders', 'stale_holders', 'path']))));

  prog.command('secret accept <name>')
    .describe([
      'Hand the mesh a value some other system was told (a broker password, a database superuser\'s), to be sealed to each',
      '--node and written at --path there (0600). Read from --from FILE, or stdin with --from -; never from the command line.',
      'The mesh never regenerates an accepted value: when a holder rejoins with a new sealing key, accept it again.',
    ])
    .option('--node', 'A node that holds it (repeat, or comma-separated)')
    .option('--path', 'Where it is written on each holder (under the host\'s MESH_HOST_ROOTS)')
    .option('--mode', 'File mode', '0600')
    .option('--from', 'File holding the value, or - for stdin', '-')
    .option('--json', 'Print as JSON')
    .example('secret accept pg-admin --node db1 --path /etc/mesh/secrets/pg-admin --from ./pg-admin.pw')
    .action(wrap(async (name: string, o: { node?: unknown; path?: string; mode?: string; from?: string; json?: boolean }) => {
      if (!o.path) throw new Error('say where it goes: --path /ABSOLUTE/PATH.');
      const r = await placeSecret(String(name), 'accepted', { nodes: list(o.node), path: o.path, mode: o.mode, from: o.from });
      emit(r, o, (d) => `accepted ${d.name} generation ${d.generation}, sealed to ${d.holders.join(', ')}; sent ${sentLine(d.sent)}`);
      mustBeSent(r.sent);
    }));

  prog.command('secret make <name>')
    .describe('Make a random secret (32 bytes, base64url), seal it to each --node, write it at --path there, and discard it. The mesh makes it again when a holder\'s sealing key changes (mesh secret remake).')
    .option('--node', 'A node that holds it (repeat, or comma-separated)')
    .option('--path', 'Where it is written on each holder')
    .option('--json', 'Print as JSON')
    .action(wrap(async (name: string, o: { node?: unknown; path?: string; json?: boolean }) => {
      if (!o.path) throw new Error('say where it goes: --path /ABSOLUTE/PATH.');
      const r = await placeSecret(String(name), 'made', { nodes: list(o.node), path: o.path });
      emit(r, o, (d) => `made ${d.name} generation ${d.generation}, sealed to ${d.holders.join(', ')}; sent ${sentLine(d.sent)}`);
      mustBeSent(r.sent);
    }));

  prog.command('secret rotate <provision> <consumer>')
    .describe([
      'Give one consumer-provider pair a new credential: one role changes, no other pair is touched. Every node running either',
      'module is resolved first (enrolled, with a queue); if any cannot be, nothing is stored or sent and the old credential keeps',
      'working. Otherwise both ends are sent their new files by this command, and the window between them is stated.',
    ])
    .option('--json', 'Print as JSON')
    .example('secret rotate appdb billing')
    .action(wrap(async (p: string, c: string, o: { json?: boolean }) => {
      const r = await rotate(String(p), String(c));
      emit(r, o, (d) => `rotated ${d.secret} to generation ${d.generation}; sent ${sentLine(d.sent)}\n${d.window}`);
      mustBeSent(r.sent);
    }));

  prog.command('secret remake')
    .describe([
      'Make again every secret a holder has no current copy of: a machine that rejoined with a new sealing key, or a module newly',
      'placed on a node. The mesh cannot read what it holds, so every holder gets the new value, and all of them are sent in one push.',
      'Accepted secrets are refused with the remedy: issue them again (mesh secret accept).',
    ])
    .option('--json', 'Print as JSON')
    .action(wrap(async (o: { json?: boolean }) => {
      const r = await remake();
      emit(r, o, (d) => [
        ...d.made.map((m: { secret: string; generation: number; holders: string[]; window?: string }) => `made ${m.secret} generation ${m.generation} for ${m.holders.join(', ')}${m.window ? `\n  ${m.window}` : ''}`),
        ...d.refused.map((x: { secret: string; reason: string }) => `refused ${x.secret}: ${x.reason}`),
        d.sent.length ? `sent ${sentLine(d.sent)}` : (d.made.length || d.refused.length ? 'nothing sent' : 'every holder has a current copy: nothing to make'),
      ].join('\n'));
      mustBeSent(r.sent);
      if (r.refused.length) throw Object.assign(new Error(`${r.refused.length} secret(s) refused; see above for each remedy.`), { exitCode: 4 });
    }));

  prog.command('provision root [path]')
    .describe('Show or set where binds and secrets are written on nodes (default /etc/mesh/provision). Each host must list it in MESH_HOST_ROOTS.')
    .option('--json', 'Print as JSON')
    .action(wrap(async (path: string | undefined, o: { json?: boolean }) => emit(await setRoot(path ? String(path) : undefined), o, (d) => d.root)));

  prog.command('provision offer <name>')
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
    .action(wrap(async (name: string, o: { kind?: string; provider?: string; host?: string; port?: number; json?: boolean }) => {
      if (!o.kind || !o.provider) throw new Error('say what it is and who provides it: --kind postgres|route --provider MODULE.');
      emit(await offer(String(name), { kind: o.kind, provider: o.provider, host: o.host, port: o.port }), o, (d) => `${d.provision}: ${d.kind} provided by ${d.provider}`);
    }));

  prog.command('provision grant <provision> <consumer>')
    .describe([
      'Let module CONSUMER use PROVISION. postgres: the pair gets its own role and database (--user, --database) and its own',
      'credential, written on the consumer as <root>/uses/CONSUMER/PROVISION.{binds,secret} and on the provider as',
      '<root>/provides/PROVISION/CONSUMER.{binds,secret}. route: the consumer supplies --port (where it listens) and receives',
      '--name (what the proxy serves). When both ends already run somewhere, the credential is made and both are sent now.',
    ])
    .option('--database', 'postgres: the database name (default the consumer, dashes as underscores)')
    .option('--user', 'postgres: the role name, this pair\'s alone (default CONSUMER_PROVISION)')
    .option('--name', 'route: the host name the proxy serves')
    .option('--port', 'route: the port the consumer listens on')
    .option('--json', 'Print as JSON')
    .example('provision grant appdb billing --database billing')
    .example('provision grant web shop --name shop.example.org --port 8080')
    .action(wrap(async (p: string, c: string, o: { database?: string; user?: string; name?: string; port?: number; json?: boolean }) => {
      const r = await grant(String(p), String(c), o);
      emit(r, o, (d) => `granted ${d.provision} to ${d.consumer}${d.credential ? `; credential generation ${d.credential.generation}, sent ${sentLine(d.sent)}` : ''}${d.note ? `\n${d.note}` : ''}`);
      mustBeSent(r.sent);
    }));

  prog.command('provision revoke <provision> <consumer>')
    .describe('Remove one pair and forget its credential. The next declaration of either end removes its files (mesh declare).')
    .option('--json', 'Print as JSON')
    .action(wrap(async (p: string, c: string, o: { json?: boolean }) => emit(await revoke(String(p), String(c)), o, (d) => d.revoked ? `revoked ${d.provision} from ${d.consumer}` : `${d.consumer} was not granted ${d.provision}`)));

  prog.command('provision list')
    .describe('Every pair: what is provided, by which module, to which consumer, which nodes hold its credential, and its generation. The same answer as select * from provision.grant_status.')
    .option('--json', 'Print as JSON')
    .action(wrap(async (o: { json?: boolean }) => emit(await provisionList(), o, (rows) => table(rows.map((r: Record<string, unknown>) => ({ ...r, holders: (r.holders as string[]).join(',') })), ['provision', 'kind', 'provider', 'consumer', 'holders', 'generation']))));

  prog.command('provision holders <provision> <consumer>')
    .describe('Who holds one pair\'s credential (provision.affected_holders): the nodes a rotation sends to, and whether each can be resolved.')
    .option('--json', 'Print as JSON')
    .action(wrap(async (p: string, c: string, o: { json?: boolean }) => emit(await holders(String(p), String(c)), o, (rows) => table(rows.map((r: Record<string, unknown>) => ({ ...r, sides: (r.sides as string[]).join(',') })), ['node', 'sides', 'resolvable']))));
}
