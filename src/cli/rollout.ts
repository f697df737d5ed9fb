// `mesh rollout`: hold changes, then release them wave by wave.
import type { Program } from '../sys/program.js';
import { waveOptions, waveChoice, type WaveFlags } from './wave_options.js';
import { emit, table } from './print.js';
import type { Declared } from '../assignment/declare.js';
import {
  holdChanges,
  startRollout,
  rolloutStatus,
  pauseRollout,
  resumeRollout,
  abortRollout,
  releaseHold,
  type Step,
} from '../assignment/rollout.js';

const stepLine = (s: Step | null) =>
  !s
    ? 'no rollout is rolling'
    : [
        `rollout ${s.rollout} is ${s.state}${s.wave ? ` at wave ${s.wave}` : ''}`,
        ...(s.out.length
          ? [
              `wave ${s.wave}: ${s.out.length > 20 ? `${s.out.slice(0, 20).join(', ')} and ${s.out.length - 20} more` : s.out.join(', ')}`,
            ]
          : []),
        ...(s.restored.length ? [`restored ${s.restored.map((d) => d.node).join(', ')}`] : []),
      ].join('\n');

export function registerRollout(p: Program): void {
  holdCommand(p);
  startCommand(p);
  statusCommand(p);
  pauseCommand(p);
  resumeCommand(p);
  abortCommand(p);
  releaseCommand(p);
}

function holdCommand(p: Program): void {
  p.prog
    .command('rollout hold')
    .describe([
      'Hold every change from now on: a node already declared gets no new composition (module, assignment, overlay, secret,',
      'enrolment of a peer: whatever changed it) until a rollout releases it. A new node still gets its first declaration.',
      'Make the changes, read mesh plan --all, then mesh rollout start. The hold is assignment.rollout in SQL.',
    ])
    .option('--json', 'Print as JSON')
    .example('rollout hold')
    .action(
      p.wrap(async (o: { json?: boolean }) =>
        emit(
          await holdChanges(),
          o,
          (r) => `holding changes (rollout ${r.rollout}): make them, read mesh plan --all, then mesh rollout start`,
        ),
      ),
    );
}

function startCommand(p: Program): void {
  waveOptions(
    p.prog
      .command('rollout start')
      .describe([
        'Release the held changes wave by wave. Each wave counts the nodes reached so far, as a number or a share of the',
        "rollout's nodes; the next wave goes out only when every node of this one reported its newest declaration applied with",
        'nothing failing within --wait-healthy. More than --max-failing failing nodes, or a wave still waiting after the wait,',
        'halts the rollout and names the nodes and why. Canaries are pinned with --first, then chosen by the hash of the',
        'name (the same nodes every time). mesh serve takes the steps; the state is in SQL (assignment.rollout_status).',
      ]),
  )
    .option('--json', 'Print as JSON')
    .example('rollout start --waves 1,25%,100% --wait-healthy 5m')
    .example('rollout start --first web1,db1 --max-failing 2')
    .action(p.wrap(async (o: WaveFlags) => emit(await startRollout(waveChoice(o)), o, stepLine)));
}

function statusCommand(p: Program): void {
  p.prog
    .command('rollout status')
    .describe(
      'The newest rollout (or ROLLOUT): its state, the wave out now, how many nodes applied, failing and waiting, why it halted, and each node with its wave and state. The same rows as select * from assignment.rollout_status and assignment.rollout_nodes.',
    )
    .option('--rollout', 'This rollout rather than the newest')
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { rollout?: number; json?: boolean }) => {
        const r = await rolloutStatus(o.rollout === undefined ? undefined : Number(o.rollout));
        emit(r, o, (s) =>
          !s
            ? 'no rollout yet: mesh rollout hold starts one'
            : [
                `rollout ${s.id}: ${s.state}${s.wave ? ` at wave ${s.wave} of ${s.waves}` : ''}${s.wave_list ? ` (${(s.wave_list as string[]).join(',')})` : ''}`,
                s.state === 'holding'
                  ? `${s.pending} node${s.pending === 1 ? '' : 's'} with a held change (mesh plan --all); mesh rollout start releases them`
                  : `${s.released} of ${s.nodes.length} released: ${s.applied} applied, ${s.failing} failing, ${s.waiting} waiting`,
                ...(s.reason ? [`why: ${s.reason}`] : []),
                ...(s.nodes.length ? [table(s.nodes, ['node', 'wave', 'state', 'why'])] : []),
              ].join('\n'),
        );
      }),
    );
}

function pauseCommand(p: Program): void {
  p.prog
    .command('rollout pause')
    .describe('Send no new wave until mesh rollout resume; what went out stays out.')
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) =>
        emit(await pauseRollout(), o, (r) => `rollout ${r.rollout} is paused: mesh rollout resume goes on`),
      ),
    );
}

function resumeCommand(p: Program): void {
  p.prog
    .command('rollout resume')
    .describe(
      'Go on with a paused or halted rollout: the wave out now is judged again, its wait starting from now (after a fix, a halted wave passes).',
    )
    .option('--json', 'Print as JSON')
    .action(p.wrap(async (o: { json?: boolean }) => emit(await resumeRollout(), o, stepLine)));
}

function abortCommand(p: Program): void {
  p.prog
    .command('rollout abort')
    .describe([
      'Stop the rollout and declare again, to every node it already reached, the declaration that node held before (a new',
      'serial, the old resources). The changes stay held: put the truth right (or mesh rollout release), then start again.',
    ])
    .option('--why', 'Why, for the history')
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { why?: string; json?: boolean }) =>
        emit(
          await abortRollout(o.why === undefined ? undefined : String(o.why)),
          o,
          (r) =>
            `rollout ${r.rollout} aborted; ${r.restored.length ? `restored ${r.restored.map((d: Declared) => d.node).join(', ')}` : 'no node had been reached'}; the changes are held again`,
        ),
      ),
    );
}

function releaseCommand(p: Program): void {
  p.prog
    .command('rollout release')
    .describe(
      'Lift the hold: every held change goes out at once, to every node whose composition changed, as without a rollout.',
    )
    .option('--json', 'Print as JSON')
    .action(
      p.wrap(async (o: { json?: boolean }) =>
        emit(
          await releaseHold(),
          o,
          (r) =>
            `rollout ${r.rollout} released; ${r.declared.length ? `re-declaring ${r.declared.map((d: Declared) => d.node).join(', ')}` : "no node's composition changed"}`,
        ),
      ),
    );
}
