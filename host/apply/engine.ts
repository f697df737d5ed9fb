// The host's apply engine: hands each resource to its kind's driver in a fixed
// order, records what it holds and where it came from, removes what its
// origin no longer declares, and restarts what must reflect changed files.
import type { Origin, Resource, ResourceKind } from '../../src/wire/resources.js';
import type { DriverContext } from './driver.js';
import type { HeldEntry } from '../../src/wire/report.js';
import { drivers as registered, type AnyDriver } from './registry.js';
import { readState, readRecord, writeState, stateText, withOrigin, statePath, type Mark } from './state.js';
import { mkdirSync } from 'node:fs';
import { writeAtomicAll } from '../../src/sys/atomic.js';
import { withStateLock } from './lock.js';
import { refuse } from '../../src/sys/errors.js';

/** Things a later kind uses come first: a service starts after its files exist; the firewall before anything listens. The brokers list late: nothing here uses it, only the link's next attempt. The agent last: it restarts this host into another version once the rest is in place. */
export const KIND_ORDER: ResourceKind[] = [
  'firewall',
  'package',
  'directory',
  'file',
  'secret',
  'wireguard',
  'container',
  'service',
  'brokers',
  'agent',
];

/** What an apply is given: the drivers' context but for what the apply itself keeps (changed) and the log, optional here. */
export interface ApplyOptions extends Omit<DriverContext, 'changed' | 'log'> {
  log?(line: string): void;
  /** Defaults to the registry (registry.ts); tests may hand their own. */
  drivers?: ReadonlyMap<ResourceKind, AnyDriver>;
}

export interface Failure {
  id: string;
  error: string;
}

export interface ApplyResult {
  /** Everything this host holds after the apply, of both origins. */
  held: HeldEntry[];
  /** Ids a driver changed on the machine. */
  changed: string[];
  /** Ids removed because their origin no longer declares them. */
  removed: string[];
  /** Ids restarted because something in their restartOn changed (D4). */
  restarted: string[];
  failed: Failure[];
}

export interface ReconcileResult extends ApplyResult {
  /** Ids found in drift or absent and put back (D6). */
  corrected: string[];
}

export interface OrphanResult {
  removed: string[];
  failed: Failure[];
}

/**
 * What a received declaration writes before anything on the machine changes
 * (D7): its signed bytes, kept in the state directory, and the mark raised to
 * it. Both go to disk in one batch with the state record, and the files the
 * apply then writes are not forced to disk one by one: the next start
 * reconciles against the kept declaration and puts back whatever a power cut
 * took (D6).
 */
export interface Journal {
  kept: { path: string; bytes: Uint8Array };
  mark: Mark;
}

/** Apply `resources` as the whole truth of `origin`; with a journal, as a received declaration (D7). */
export function apply(
  resources: Resource[],
  origin: Origin,
  opts: ApplyOptions,
  journal?: Journal,
): Promise<ApplyResult> {
  return serialised(opts.stateDir, () => run(resources, origin, opts, false, journal));
}

/** D2: raise the mark kept in the state record, durably, holding what it holds. */
export function recordMark(stateDir: string, mark: Mark): Promise<void> {
  return serialised(stateDir, async () => {
    const r = readRecord(stateDir);
    if (mark.serial > r.mark.serial) await writeState(stateDir, { held: r.held, mark });
  });
}

/** Observe each resource and re-apply only what drifted or vanished (D6). */
export function reconcile(resources: Resource[], origin: Origin, opts: ApplyOptions): Promise<ReconcileResult> {
  return serialised(opts.stateDir, () => run(resources, origin, opts, true));
}

/** What this host holds, from its state file. */
export function holdings(stateDir: string): Promise<HeldEntry[]> {
  return readState(stateDir);
}

/**
 * For a host that lost applied.json and was handed its last report (R2): the
 * declared things that report lists and the current declaration does not are
 * removed. Carried ones are never touched: the bundle, not the mesh, owns them.
 */
export function removeOrphans(
  previouslyHeld: HeldEntry[],
  resources: Resource[],
  opts: ApplyOptions,
): Promise<OrphanResult> {
  return serialised(opts.stateDir, async () => {
    const ctx = contextOf(opts);
    const ids = new Set(resources.map((r) => r.id));
    const orphans = previouslyHeld.map(withOrigin).filter((h) => h.origin === 'declared' && !ids.has(h.id));
    const out = await removeAll(orphans, opts, ctx);
    const gone = new Set(out.removed);
    const { held: state, mark } = readRecord(opts.stateDir);
    if (state.some((h) => h.origin === 'declared' && gone.has(h.id))) {
      await writeState(opts.stateDir, {
        held: state.filter((h) => !(h.origin === 'declared' && gone.has(h.id))),
        mark,
      });
    }
    return { removed: out.removed, failed: out.failed };
  });
}

// One apply at a time per state directory: apply and the 5-minute reconcile
// both read, act on and rewrite applied.json. In this process a queue; across
// processes (a bundle re-run beside the running host) a lock on the state (lock.ts).
const queues = new Map<string, Promise<unknown>>();
function serialised<T>(stateDir: string, fn: () => Promise<T>): Promise<T> {
  const prev = queues.get(stateDir) ?? Promise.resolve();
  const next = prev.catch(() => {}).then(() => withStateLock(stateDir, fn));
  queues.set(stateDir, next);
  void next
    .finally(() => {
      if (queues.get(stateDir) === next) queues.delete(stateDir);
    })
    .catch(() => {});
  return next;
}

function contextOf(opts: ApplyOptions): DriverContext {
  return {
    stateDir: opts.stateDir,
    roots: opts.roots,
    openSealed: opts.openSealed,
    overlayKeyPath: opts.overlayKeyPath,
    wgDir: opts.wgDir,
    firewall: opts.firewall,
    dpkgRoot: opts.dpkgRoot,
    carried: opts.carried,
    journaled: false,
    agent: opts.agent,
    changed: new Set(),
    log: opts.log ?? (() => {}),
  };
}

function driverFor(kind: ResourceKind, opts: ApplyOptions): AnyDriver {
  const d = (opts.drivers ?? registered).get(kind);
  if (!d) {
    throw refuse(
      'MSHC0',
      `No driver for resource kind "${kind}" on this host, so it was not applied`,
      `update mesh-host to a version that knows "${kind}"`,
    );
  }
  return d;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

const byKind = <T extends { kind: ResourceKind }>(xs: T[]): T[] =>
  xs
    .map((x, i) => ({ x, i }))
    .sort((a, b) => KIND_ORDER.indexOf(a.x.kind) - KIND_ORDER.indexOf(b.x.kind) || a.i - b.i)
    .map(({ x }) => x);

async function run(
  resources: Resource[],
  origin: Origin,
  opts: ApplyOptions,
  reconciling: boolean,
  journal?: Journal,
): Promise<ReconcileResult> {
  const seenIds = new Set<string>();
  for (const r of resources) {
    if (seenIds.has(r.id)) throw refuse('MSHC1', `The ${origin} resources list ${r.id} twice; nothing was applied`);
    seenIds.add(r.id);
  }
  const record = readRecord(opts.stateDir);
  const before = record.held;
  const a: Pass = {
    resources,
    origin,
    opts,
    ctx: contextOf(opts),
    before,
    prevById: new Map(before.map((h) => [h.id, h])),
    seenIds,
  };
  const mark = journal && journal.mark.serial > record.mark.serial ? journal.mark : record.mark;
  const intent = journal ? await writeIntent(a, journal, mark) : undefined;
  const out: ReconcileResult = { held: [], changed: [], removed: [], restarted: [], failed: [], corrected: [] };
  const { mine, applied, made } = await applyEach(a, reconciling, out);

  // Removal by omission, of this origin's things only (D3).
  const omitted = before.filter((h) => h.origin === origin && !seenIds.has(h.id));
  const removal = await removeAll(omitted, opts, a.ctx);
  out.removed = removal.removed;
  out.failed.push(...removal.failed);
  mine.push(...removal.kept);

  await restartChanged(a, applied, made, out);
  out.held = [...before.filter((h) => h.origin !== origin), ...mine];
  const done = { held: out.held, mark };
  // After the journal, the intent written before is also a safe record: this
  // one need only never be torn. Most applies leave it exactly as intended.
  if (!journal) await writeState(opts.stateDir, done);
  else if (stateText(done) !== intent) await writeState(opts.stateDir, done, 'whole');
  if (!reconciling) delete (out as Partial<ReconcileResult>).corrected;
  return out;
}

/** One apply's givens: its resources and origin, the drivers' context, and what the host held before, by id. */
interface Pass {
  resources: Resource[];
  origin: Origin;
  opts: ApplyOptions;
  ctx: DriverContext;
  before: HeldEntry[];
  prevById: Map<string, HeldEntry>;
  seenIds: Set<string>;
}

/**
 * What the state will be if every resource applies, and, until it is
 * removed, everything this origin held before, written with the kept
 * declaration: a power cut at any later step leaves a record that still
 * names whatever may be on the disk. Returns the text written.
 */
async function writeIntent(
  { resources, origin, opts, ctx, before, prevById, seenIds }: Pass,
  journal: Journal,
  mark: Mark,
): Promise<string> {
  const held = [
    ...before.filter((h) => h.origin !== origin),
    ...byKind(resources).flatMap((r) => {
      const prev = prevById.get(r.id);
      const d = (opts.drivers ?? registered).get(r.kind);
      return d && (!prev || prev.origin === origin)
        ? [{ id: r.id, kind: r.kind, target: d.target(r), origin, digest: d.digest(r) }]
        : [];
    }),
    ...before.filter((h) => h.origin === origin && !seenIds.has(h.id)),
  ];
  const intent = stateText({ held, mark });
  mkdirSync(opts.stateDir, { recursive: true, mode: 0o700 });
  // The kept declaration renamed first: a filesystem that keeps renames in a
  // directory in order never shows the new mark beside the old declaration.
  await writeAtomicAll([
    { path: journal.kept.path, bytes: journal.kept.bytes, mode: 0o600 },
    { path: statePath(opts.stateDir), bytes: intent, mode: 0o600 },
  ]);
  ctx.journaled = true;
  return intent;
}

/**
 * Each resource handed to its kind's driver, in kind order, into OUT: what
 * this origin now holds (MINE), what applied without error (eligible for
 * restart-on) and what was made or changed now (already reflects its files).
 */
async function applyEach(
  { resources, origin, opts, ctx, prevById }: Pass,
  reconciling: boolean,
  out: ReconcileResult,
): Promise<{ mine: HeldEntry[]; applied: Set<string>; made: Set<string> }> {
  const mine: HeldEntry[] = [];
  const applied = new Set<string>();
  const made = new Set<string>();
  for (const r of byKind(resources)) {
    const prev = prevById.get(r.id);
    try {
      if (prev && prev.origin !== origin) {
        throw refuse(
          'MSHC2',
          `${r.id} is already held as ${prev.origin}, and each origin manages only its own`,
          `Remove it from the ${prev.origin} resources first`,
        );
      }
      const d = driverFor(r.kind, opts);
      let changed: boolean;
      if (reconciling) {
        changed = (await d.observe(r, ctx)) !== 'ok' && (await d.apply(r, ctx));
        if (changed) out.corrected.push(r.id);
      } else {
        changed = await d.apply(r, ctx);
      }
      mine.push({ id: r.id, kind: r.kind, target: d.target(r), origin, digest: d.digest(r) });
      applied.add(r.id);
      if (changed) {
        out.changed.push(r.id);
        made.add(r.id);
        ctx.changed.add(r.id);
      }
    } catch (err) {
      out.failed.push({ id: r.id, error: message(err) });
      // Still on the machine as far as we know: keep holding it so a later
      // omission removes it.
      if (prev && prev.origin === origin) mine.push(prev);
    }
  }
  return { mine, applied, made };
}

/**
 * D4: restart what reads something that changed in this apply. Not what was
 * just made (it started with the new files) and not on a later apply where
 * nothing changed: ctx.changed starts empty every time.
 */
async function restartChanged(
  { resources, opts, ctx }: Pass,
  applied: Set<string>,
  made: Set<string>,
  out: ReconcileResult,
): Promise<void> {
  for (const r of byKind(resources)) {
    if (!applied.has(r.id) || made.has(r.id) || !r.restartOn?.some((x) => ctx.changed.has(x))) continue;
    const d = driverFor(r.kind, opts);
    if (!d.restart) continue;
    try {
      await d.restart(r, ctx);
      out.restarted.push(r.id);
    } catch (err) {
      out.failed.push({ id: r.id, error: message(err) });
    }
  }
}

/** Remove in reverse kind order: services stop before the files they read go. */
async function removeAll(
  held: HeldEntry[],
  opts: ApplyOptions,
  ctx: DriverContext,
): Promise<OrphanResult & { kept: HeldEntry[] }> {
  const out = { removed: [] as string[], failed: [] as Failure[], kept: [] as HeldEntry[] };
  for (const h of byKind(held).reverse()) {
    try {
      await driverFor(h.kind, opts).remove(h, ctx);
      out.removed.push(h.id);
      // A removed file is a changed file for whoever restarts on it.
      ctx.changed.add(h.id);
      ctx.changed.add(h.target);
    } catch (err) {
      out.failed.push({ id: h.id, error: message(err) });
      out.kept.push(h);
    }
  }
  return out;
}
