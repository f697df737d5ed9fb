// `mesh log`, `mesh audit verify`, `mesh audit head`: the tamper-evident history (C3).
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { readLog } from '../audit/log.js';
import { verifyHistory, currentHead, type Verified } from '../audit/verify.js';
import { writeHead, headText } from '../audit/head.js';

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
      'Check the audit history: every audit trigger is in force on the tables whose changes it records (a missing or',
      'disabled one is named, MSH75), and the hash chain recomputed from its first row is whole (each row carries the hash',
      "of the one before; the first row changed or removed behind the database's back is named, MSH71). With --head FILE,",
      'also that the chain still reaches the head mesh audit head kept there (MSH76): a chain rewritten whole or cut from',
      'its end is whole again, and only a head kept outside the store shows it. Any problem exits non-zero.',
    ])
    .option('--head', 'A head mesh audit head --out wrote earlier: the chain must still pass through it')
    .option('--json', 'Print as JSON')
    .example('audit verify')
    .example('audit verify --head /root/mesh-audit-head.json')
    .action(
      p.wrap(async (o: { head?: string; json?: boolean }) => {
        const v = await verifyHistory({ head: o.head === undefined ? undefined : String(o.head) });
        emit(
          v,
          o,
          (d: Verified) =>
            `the audit history is whole: ${d.rows} rows, head ${d.head}` +
            (d.kept ? `; it still reaches the kept head (row ${d.kept.seq})` : ''),
        );
      }),
    );

  p.prog
    .command('audit head')
    .describe([
      "The audit history's head: the newest row's seq and hash, once the history verified whole. Keep it where no daemon",
      'can write (a file the operator keeps, another machine, a ticket): mesh audit verify --head FILE later shows whether',
      'the history was rewritten or cut since. Prints it as JSON; --out FILE writes it there (atomically, mode 0644).',
    ])
    .option('--out', 'Write the head to this file')
    .example('audit head --out /root/mesh-audit-head.json')
    .action(
      p.wrap(async (o: { out?: string }) => {
        const head = await currentHead();
        if (o.out !== undefined) await writeHead(String(o.out), head);
        process.stdout.write(headText(head));
      }),
    );
}
