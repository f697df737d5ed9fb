// `mesh secret list|accept|make|rotate|remake` (S1-S5). Values never pass
// through argv or env: an accepted value is read from a file or stdin, a made
// one never leaves the process that seals it.
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { list, sentLine } from './sent.js';
import { rotate } from '../provision/rotate.js';
import { redeclare } from '../provision/redeclare.js';
import { placeSecret, secretList } from '../secret/accept.js';
import { refuse } from '../sys/errors.js';

export function registerSecret(p: Program): void {
  for (const command of [listingCommand, acceptCommand, makeCommand, rotateCommand, remakeCommand]) command(p);
}

function listingCommand(p: Program): void {
  p.prog
    .command('secret list')
    .describe(
      'Every secret the mesh holds sealed: made or accepted, its generation, its holders, and whose copy is stale (sealed to a key the node no longer has). Never a value: the mesh cannot read one.',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) =>
        emit(await secretList(), o, (rows) =>
          table(rows, ['name', 'origin', 'generation', 'holders', 'stale_holders', 'path']),
        ),
      ),
    );
}

function acceptCommand(p: Program): void {
  p.prog
    .command('secret accept <name>')
    .describe([
      "Hand the mesh a value some other system was told (a broker password, a database superuser's), to be sealed to each",
      '--node and written at --path there (0600). Read from --from FILE, or stdin with --from -; never from the command line.',
      'The mesh never regenerates an accepted value: when a holder rejoins with a new sealing key, accept it again.',
    ])
    .option('--node', 'A node that holds it (repeat, or comma-separated)')
    .option('--path', "Where it is written on each holder (under the host's MESH_HOST_ROOTS)")
    .option('--mode', 'File mode', '0600')
    .option('--from', 'File holding the value, or - for stdin', '-')
    .option('--json', 'Print as JSON')
    .example('secret accept pg-admin --node db1 --path /etc/mesh/secrets/pg-admin --from ./pg-admin.pw')
    .action(
      p.wrap(
        async (name: string, o: { node?: unknown; path?: string; mode?: string; from?: string; json?: boolean }) => {
          if (!o.path) throw refuse('MSH48', 'no --path was given');
          const r = await placeSecret(String(name), 'accepted', {
            nodes: list(o.node),
            path: o.path,
            mode: o.mode,
            from: o.from,
          });
          emit(
            r,
            o,
            (d) =>
              `accepted ${d.name} generation ${d.generation}, sealed to ${d.holders.join(', ')}; ${sentLine(d.sent)}`,
          );
        },
      ),
    );
}

function makeCommand(p: Program): void {
  p.prog
    .command('secret make <name>')
    .describe(
      "Make a random secret (32 bytes, base64url), seal it to each --node, write it at --path there, and discard it. The mesh makes it again when a holder's sealing key changes (mesh secret remake).",
    )
    .option('--node', 'A node that holds it (repeat, or comma-separated)')
    .option('--path', 'Where it is written on each holder')
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (name: string, o: { node?: unknown; path?: string; json?: boolean }) => {
        if (!o.path) throw refuse('MSH48', 'no --path was given');
        const r = await placeSecret(String(name), 'made', { nodes: list(o.node), path: o.path });
        emit(
          r,
          o,
          (d) => `made ${d.name} generation ${d.generation}, sealed to ${d.holders.join(', ')}; ${sentLine(d.sent)}`,
        );
      }),
    );
}

function rotateCommand(p: Program): void {
  p.prog
    .command('secret rotate <provision> <consumer>')
    .describe([
      'Give one consumer-provider pair a new credential: one role changes, no other pair is touched. Every node running either',
      'module is resolved first (enrolled, with a queue); if any cannot be, nothing is stored or sent and the old credential keeps',
      'working. Otherwise both ends are owed their new files by this command (the broker need not be up), and there is no window: the',
      'provider accepts the old and the new credential until every holder acknowledged the new one, then stops accepting the old.',
    ])
    .option('--json', 'Print as JSON')
    .example('secret rotate appdb billing')
    .action(
      p.wrap(async (p: string, c: string, o: { json?: boolean }) => {
        const r = await rotate(String(p), String(c));
        emit(r, o, (d) => `rotated ${d.secret} to generation ${d.generation}; ${sentLine(d.sent)}\n${d.window}`);
      }),
    );
}

function remakeCommand(p: Program): void {
  p.prog
    .command('secret remake')
    .describe([
      'Make again every secret a holder has no current copy of: a machine that rejoined with a new sealing key, or a module newly',
      'placed on a node. The mesh cannot read what it holds, so every holder gets the new value, and all of them are sent in one push.',
      'Accepted secrets are refused with the remedy: issue them again (mesh secret accept).',
    ])
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) => {
        const w = await redeclare();
        const r = { made: w.remade, refused: w.notRemade, sent: w.redeclared };
        emit(r, o, (d) =>
          [
            ...d.made.map(
              (m: { secret: string; generation: number; holders: string[]; window?: string }) =>
                `made ${m.secret} generation ${m.generation} for ${m.holders.join(', ')}${m.window ? `\n  ${m.window}` : ''}`,
            ),
            ...d.refused.map((x: { secret: string; reason: string }) => `refused ${x.secret}: ${x.reason}`),
            d.sent.length
              ? sentLine(d.sent)
              : d.made.length || d.refused.length
                ? 'nothing queued'
                : 'every holder has a current copy: nothing to make',
          ].join('\n'),
        );
        if (r.refused.length)
          throw Object.assign(new Error(`${r.refused.length} secret(s) refused; see above for each remedy.`), {
            exitCode: 4,
          });
      }),
    );
}
