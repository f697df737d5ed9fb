// Rollout in waves: the rules live in SQL (sql/assignment/0017);
// this drives them. One step (advanceRollout) is shared by serve's roller and
// by the commands that move a rollout, so both ends read health the same way.
import type { Sql } from '../store/connect.js';
import { withStore } from '../store/with_store.js';
import { readSigner, type Signer } from '../home/home.js';
import { nodeName } from '../wire/names.js';
import { parseDuration } from '../inventory/token.js';
import { declare, declareChanged, type Declared } from './declare.js';
import { refuse } from '../sys/errors.js';

export interface StartOptions {
  waves?: string;
  waitHealthy?: string;
  maxFailing?: string | number;
  first?: string;
}

/** DECLARED and RESTORED are what this step declared (another serve may have declared the rest); OUT is every node of the wave out now. */
export interface Step {
  rollout: number;
  state: string;
  wave: number;
  out: string[];
  declared: Declared[];
  restored: Declared[];
}

const inStore = <T>(fn: (sql: Sql) => Promise<T>) => withStore('assignment', fn, { max: 2 });

/** Hold every change from now on: nothing already declared gets a new composition until a rollout releases it. */
export function holdChanges() {
  return inStore(async (sql) => {
    const [r] = await sql`select assignment.hold_changes() as id`;
    return { rollout: Number(r!.id), state: 'holding' };
  });
}

/**
 * Hold changes, make the one PREPARE makes, and fix the waves over it, in one
 * transaction; then release the first wave. A rollout of one change: no other
 * command's change can join it between the hold and the start.
 */
export function rolloutOf<T>(o: StartOptions, prepare: (sql: Sql) => Promise<T>, signer: Signer = readSigner()) {
  const s = rolloutSettings(o);
  return inStore(async (sql) => {
    const made = await sql.begin(async (tx) => {
      await tx`select assignment.hold_changes()`;
      const made = await prepare(tx as unknown as Sql);
      await tx`select assignment.start_rollout(${s.waves}::text[], ${s.wait}::interval, ${s.maxFailing}::int, ${s.first}::text[])`;
      return made;
    });
    return { made, step: await advanceRollout(sql, signer) };
  });
}

/** Fix the waves over the held changes and release the first. */
export function startRollout(o: StartOptions, signer: Signer = readSigner()) {
  const { waves, wait, maxFailing, first } = rolloutSettings(o);
  return inStore(async (sql) => {
    await sql`select assignment.start_rollout(${waves}::text[], ${wait}::interval, ${maxFailing}::int, ${first}::text[])`;
    return advanceRollout(sql, signer);
  });
}

/** The waves, the wait for health, the failures allowed and the canaries, from the options as typed. */
function rolloutSettings(o: StartOptions) {
  const waves = (o.waves ?? '1,10%,50%,100%').split(',').map((w) => w.trim());
  const wait = parseDuration(o.waitHealthy ?? '2m', '--wait-healthy');
  const maxFailing = Number(o.maxFailing ?? 0);
  if (!Number.isSafeInteger(maxFailing))
    throw refuse(
      'MSH25',
      `--max-failing ${JSON.stringify(String(o.maxFailing))} is not a whole number`,
      'give 0 to halt on the first failure',
    );
  const first = o.first
    ? String(o.first)
        .split(',')
        .map((n) => nodeName(n.trim()))
    : [];
  return { waves, wait, maxFailing, first };
}

/**
 * One step: pay what an abort still owes, then let SQL pass, finish or halt
 * the wave out now, and declare the nodes it released. Safe from any number
 * of processes: the rollout row is locked in SQL, declaring takes its turn,
 * and a node declared twice gets nothing the second time (it is unchanged).
 */
export async function advanceRollout(sql: Sql, signer: Signer): Promise<Step | null> {
  const restored: Declared[] = [];
  const owed = await sql`select rollout, node, from_serial from assignment.restores_owed()`;
  for (const id of new Set(owed.map((o) => Number(o.rollout)))) {
    const nodes = owed
      .filter((o) => Number(o.rollout) === id)
      .map((o) => ({ node: o.node as string, serial: Number(o.from_serial) }));
    restored.push(...(await declare({ sql, signer, restore: { rollout: id, nodes } })));
  }
  const [a] = await sql`select rollout, state, wave, undeclared from assignment.advance_rollout()`;
  if (!a)
    return restored.length
      ? { rollout: Number(owed[0]!.rollout), state: 'aborted', wave: 0, out: [], declared: [], restored }
      : null;
  const undeclared = a.undeclared as string[];
  const declared = undeclared.length ? await declare({ sql, signer, nodes: undeclared, changedOnly: true }) : [];
  // Released but no longer changed (the change was undone): nothing for it to apply.
  const unchanged = undeclared.filter((n) => !declared.some((d) => d.node === n));
  if (unchanged.length) await sql`select assignment.note_unchanged(${a.rollout}, ${unchanged}::text[])`;
  const out = (
    await sql`select node from assignment.rollout_node where rollout = ${a.rollout} and wave = ${a.wave} order by position`
  ).map((r) => r.node as string);
  return { rollout: Number(a.rollout), state: a.state as string, wave: Number(a.wave), out, declared, restored };
}

/** The newest rollout (or ID) and each of its nodes, from the views a DBA reads. */
export function rolloutStatus(id?: number) {
  return inStore((sql) => readRolloutStatus(sql, id));
}

/** What `mesh rollout status` prints, on a store already open (the console's rollouts page reads it too). */
export async function readRolloutStatus(sql: Sql, id?: number) {
  const [r] =
    id === undefined
      ? await sql`select * from assignment.rollout_status order by id desc limit 1`
      : await sql`select * from assignment.rollout_status where id = ${id}`;
  if (!r) return null;
  const nodes =
    await sql`select node, wave, position, state, why, from_serial, newest_serial, released_at from assignment.rollout_nodes
                           where rollout = ${r.id} order by position`;
  const pending =
    r.state === 'holding' ? ((await sql`select assignment.count_held_changes() as n`)[0]!.n as number) : undefined;
  return { ...r, id: Number(r.id), ...(pending === undefined ? {} : { pending }), nodes };
}

/** Every rollout, newest first, as assignment.rollout_status has it: the console's list. */
export function readRollouts(sql: Sql) {
  return sql`select id, state, wave, waves, nodes, released, applied, failing, waiting, reason, held_at, started_at, ended_at
               from assignment.rollout_status order by id desc`;
}

export function pauseRollout() {
  return inStore(async (sql) => ({
    rollout: Number((await sql`select assignment.move_rollout('pause') as id`)[0]!.id),
    state: 'paused',
  }));
}

export function resumeRollout(signer: Signer = readSigner()) {
  return inStore(async (sql) => {
    await sql`select assignment.move_rollout('resume')`;
    return advanceRollout(sql, signer);
  });
}

/** Every node already reached gets the declaration it held before; the changes are held again. */
export function abortRollout(why?: string, signer: Signer = readSigner()) {
  return inStore(async (sql) => {
    const [r] = await sql`select assignment.abort_rollout(${why ?? null}) as id`;
    const step = await advanceRollout(sql, signer);
    return { rollout: Number(r!.id), state: 'aborted', restored: step?.restored ?? [] };
  });
}

/** Lift the hold: every held change goes out at once, as W2 sends any change. */
export function releaseHold(signer: Signer = readSigner()) {
  return inStore(async (sql) => {
    const [r] = await sql`select assignment.release_hold() as id`;
    const declared = await declareChanged({ sql, signer });
    return { rollout: Number(r!.id), state: 'released', declared };
  });
}
