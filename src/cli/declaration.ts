// `mesh assign|unassign|plan|declare`: what runs where, and the signed
// declaration each node is sent (one composing path: plan shows what declare sends).
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { plan, declare, waitDelivered } from '../assignment/declare.js';
import { refuse } from '../sys/errors.js';

// What only assign, unassign, plan --all, outbox and freshness use is loaded when they run:
// the re-declare after assign pulls in secrets, the broker and amqplib, which `mesh declare`
// never needs and would pay for at every start.
const redeclaring = () => import('./redeclare.js');
const assigning = async (m: string, n: string, on: boolean) => {
  const [{ afterChange }, { assign }] = await Promise.all([redeclaring(), import('../assignment/assign.js')]);
  return afterChange(await assign(m, n, on));
};

export function registerDeclaration(p: Program): void {
  for (const command of [assignCommand, unassignCommand, planCommand, freshnessCommand, declareCommand, outboxCommand])
    command(p);
}

function assignCommand(p: Program): void {
  p.prog
    .command('assign <module> <node>')
    .describe(
      'Run MODULE on NODE: every node whose composition changed is owed a new declaration, and mesh serve sends it.',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (m: string, n: string, o: { json?: boolean }) => {
        const { redeclareLine } = await redeclaring();
        emit(
          await assigning(String(m), String(n), true),
          o,
          (d) =>
            `${d.changed ? `assigned ${d.module} to ${d.node}` : `${d.module} was already assigned to ${d.node}`}\n${redeclareLine(d.redeclared, d)}`,
        );
      }),
    );
}

function unassignCommand(p: Program): void {
  p.prog
    .command('unassign <module> <node>')
    .describe('Stop running MODULE on NODE: the next declaration leaves its resources out, and the node removes them.')
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (m: string, n: string, o: { json?: boolean }) => {
        const { redeclareLine } = await redeclaring();
        emit(
          await assigning(String(m), String(n), false),
          o,
          (d) =>
            `${d.changed ? `unassigned ${d.module} from ${d.node}` : `${d.module} was not assigned to ${d.node}`}\n${redeclareLine(d.redeclared, d)}`,
        );
      }),
    );
}

function planCommand(p: Program): void {
  p.prog
    .command('plan [node]')
    .describe([
      'Show the declaration NODE would be sent next, without sending it; --json prints the exact body bytes `mesh declare` would sign.',
      'With no NODE: what is pending across the fleet -- nodes whose composition changed and that no declaration carries yet,',
      'and declarations owed and not yet delivered (mesh outbox).',
      'With --all: what the next declarations change on every node, against the one it last applied: resources added,',
      'changed and removed, and the services that restart because of them (restartOn), nodes with the same changes on one',
      "line; --json prints every node's detail.",
    ])
    .option('--all', 'What changes on every node, grouped')
    .option(
      '--json',
      "Print the declaration body, byte for byte (with no NODE: what is pending, as JSON; with --all: each node's changes)",
    )
    .example('plan')
    .example('plan --all')
    .example('plan web1 --json')
    .action(
      p.wrap(async (n: string | undefined, o: { all?: boolean; json?: boolean }) => {
        if (o.all) {
          const { planSummary, planNodes, describeGroups } = await import('../assignment/plan_all.js');
          if (n !== undefined)
            throw refuse('MSHA0', 'both a node and --all were given', 'name a node or give --all, not both');
          if (o.json) return emit(await planNodes(), o, () => '');
          const [{ withStore }, { freezeHolds, holdLine }] = await Promise.all([
            import('../store/with_store.js'),
            import('../assignment/freeze.js'),
          ]);
          const frozen = await withStore('assignment', (sql) => freezeHolds(sql));
          return console.log([describeGroups(await planSummary()), ...frozen.map(holdLine)].join('\n'));
        }
        if (n === undefined) {
          const [{ pending }, { holdLine }] = await Promise.all([
            import('../assignment/outbox.js'),
            import('../assignment/freeze.js'),
          ]);
          return emit(await pending(), o, (d) =>
            [
              d.changed.length
                ? `changed, not yet declared (mesh declare --all --changed owes them): ${d.changed.join(', ')}`
                : "every node's composition is declared",
              ...d.frozen.map(holdLine),
              d.owed.length
                ? `owed, not yet delivered:\n${table(
                    d.owed.map((x: Record<string, unknown>) => ({ ...x, last_error: x.last_error ?? '' })),
                    ['node', 'kind', 'serial', 'owed_since', 'attempts', 'last_error'],
                  )}`
                : 'nothing owed: every declaration was delivered',
            ].join('\n'),
          );
        }
        const d = await plan(String(n));
        if (o.json) process.stdout.write(d.text + '\n');
        else
          console.log(
            `declaration ${d.serial} for ${n}:\n` +
              table(
                d.resources.map((r) => ({ id: r.id, kind: r.kind })),
                ['id', 'kind'],
              ),
          );
      }),
    );
}

function freshnessCommand(p: Program): void {
  p.prog
    .command('freshness')
    .describe([
      "How long a declaration holds once signed (default 7d), and each node's newest declaration: signed, expires, expired.",
      'mesh serve signs a declaration again (a new serial, the same resources: nothing restarts) at half its lifetime.',
      'A host keeps applying one that expired but reports stale (mesh node list); one expired when it arrives is refused.',
      'A new --lifetime holds for declarations signed from now on.',
    ])
    .option('--lifetime', 'Set it: a whole number and s, m, h or d (10s to 1 year), e.g. 7d or 12h')
    .option('--json', 'Print as JSON')
    .example('freshness')
    .example('freshness --lifetime 3d')
    .action(
      p.wrap(async (o: { lifetime?: string; json?: boolean }) => {
        const { freshness } = await import('../assignment/freshness.js');
        const f = await freshness(o.lifetime === undefined ? undefined : String(o.lifetime));
        emit(
          f,
          o,
          (d) =>
            `${d.changed ? 'set: ' : ''}a declaration holds ${d.lifetime} once signed\n` +
            (d.nodes.length
              ? table(d.nodes as never, ['node', 'serial', 'signed_at', 'expires_at', 'expired'])
              : 'no node has been declared yet'),
        );
      }),
    );
}

function declareCommand(p: Program): void {
  p.prog
    .command('declare [node]')
    .describe([
      'Compose, sign and owe NODE its declaration (or every enrolled node with --all): serial, digest and the signed bytes are',
      'recorded in the outbox in one transaction, and this returns once it committed. Over more than 200 nodes it commits in',
      'parts (200, then 1,000 at a time), so mesh serve starts publishing before the rest are composed; if it fails part-way it',
      'says how many were declared, and running it again declares the rest. mesh serve publishes what is owed, with confirms,',
      "to each node's queue (see mesh outbox); --wait returns only once the broker confirmed every one.",
    ])
    .option('--all', 'Every enrolled node')
    .option('--changed', 'Only nodes whose composed resources differ from their last declaration')
    .option('--wait', 'Return only once mesh serve delivered them (the broker confirmed)')
    .option('--json', 'Print as JSON')
    .example('declare web1')
    .example('declare --all --changed')
    .action(
      p.wrap(async (n: string | undefined, o: { all?: boolean; changed?: boolean; wait?: boolean; json?: boolean }) => {
        if (!n && !o.all)
          throw refuse('MSHA0', 'neither a node nor --all was given', 'name a node, or --all for every enrolled node');
        if (n && o.all)
          throw refuse('MSHA0', 'both a node and --all were given', 'name a node or give --all, not both');
        const r = await declare({ nodes: o.all ? undefined : [String(n)], changedOnly: o.changed, refuseHeld: true });
        if (o.wait) await waitDelivered(r);
        emit(r, o, (rows) =>
          rows.length
            ? `${o.wait ? 'delivered' : 'queued'}:\n` + table(rows, ['node', 'serial'])
            : 'nothing to declare: every node already holds its composition',
        );
      }),
    );
}

function outboxCommand(p: Program): void {
  p.prog
    .command('outbox')
    .describe(
      'What is owed to whom and not yet confirmed by the broker: since when, how many attempts, the last error. The same answer as select * from assignment.pending_delivery.',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) => {
        const { outbox } = await import('../assignment/outbox.js');
        const rows = await outbox();
        emit(rows, o, (r) =>
          r.length
            ? table(
                r.map((x: Record<string, unknown>) => ({ ...x, last_error: x.last_error ?? '' })),
                ['node', 'kind', 'serial', 'owed_since', 'attempts', 'last_error'],
              )
            : 'nothing owed: every declaration was delivered',
        );
      }),
    );
}
