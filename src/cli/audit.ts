// `mesh log`, `mesh audit verify`: the tamper-evident history (C3).
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { readLog } from '../audit/log.js';
import { verifyHistory } from '../audit/verify.js';

export function registerAudit(p: Program): void {
  p.prog
    .command('log')
    .describe([
      'The audit history, oldest first: every token issued and spent, enrolment, declaration (node, serial, digest),',
      'refusal a host reported (its fault and reason), secret created and rotated, retire, with who and when.',
      'Kinds: token-issued, token-spent, enrolled, declared, refused-forged, refused-replayed, refused-malformed, refused-stale,',
      'secret-created, rotated, retired, rollout (select * from audit.kind); a prefix before a dash selects a family',
      '(--kind token, --kind refused). refused-forged is somebody trying (another key, mesh or node); refused-replayed is',
      "the mesh's own older declaration delivered again. A refusal a node repeats is one row: inventory.refusal counts it.",
      'The same rows as select * from audit.log.',
    ])
    .option('--node', 'Only rows about this node')
    .option('--since', 'Only rows newer than this: 30m, 24h, 7d')
    .option('--kind', 'Only rows of this kind, or of this family (token)')
    .option('--limit', 'At most this many rows, the newest', 100)
    .option('--json', 'Print as JSON')
    .example('log --node web1 --since 1h')
    .example('log --kind refused --json')
    .example('log --kind refused-forged --since 7d')
    .action(
      p.wrap(async (o: { node?: string; since?: string; kind?: string; limit?: number; json?: boolean }) => {
        const rows = await readLog({
          node: o.node === undefined ? undefined : String(o.node),
          since: o.since === undefined ? undefined : String(o.since),
          kind: o.kind === undefined ? undefined : String(o.kind),
          limit: Number(o.limit),
        });
        emit(rows, o, (r) => table(r, ['seq', 'at', 'kind', 'node', 'actor', 'what']));
      }),
    );

  p.prog
    .command('audit verify')
    .describe([
      "Recompute the audit history's hash chain from its first row and say whether it is whole. Each row carries the hash",
      "of the one before; a row changed or removed behind the database's back (a superuser with its triggers off) is named:",
      "the first that does not match, with a non-zero exit (MSH71). Whole, it prints the newest row's hash: keep it somewhere",
      'else, and a later verify whose chain does not pass through it shows rows cut from the end or a rewritten tail.',
    ])
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) => {
        emit(await verifyHistory(), o, (d) => `the audit history is whole: ${d.rows} rows, head ${d.head}`);
      }),
    );
}
