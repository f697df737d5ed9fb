// The fleet as the console shows it. The fleet page reads one page at a time
// (readFleetPage: inventory.fleet_page, keyset on the name, filtered in SQL),
// so the browser holds and draws a page, never the whole fleet, and reads the
// page again when the fleet changed. The stream behind that is kept live: rows read from the function
// `mesh node list` prints (inventory.fleet_page through readNodeStatus) and
// the serials of assignment.declaration_status, re-read when inventory says a
// node or report changed (LISTEN, inventory 0005) and pushed to every page as
// the rows that differ. "Out of touch" changes with the clock alone, so a
// timer also re-reads at the instant the next node would cross the edge, and
// at the instant the next declaration a node holds expires (stale, C2).
import type { Sql } from '../store/connect.js';
import { readNodeStatus, readFleetCounts, type FleetFilter } from '../inventory/node.js';
import { readFailing, onInventoryChange } from '../inventory/console.js';
import { readSerials } from '../assignment/console.js';

/** inventory.node_status says `here` for 150 s after a word; only the timer's aim uses this, never the state. */
const HERE_SECONDS = 150;
/** Ages ("out of touch 4m", report ages) move by the minute: re-read at least this often. */
const AGES_MS = 30_000;
/** A storm of heards is one re-read, not one each. */
const COALESCE_MS = 300;

export interface FleetRow {
  name: string;
  site: string;
  state: string;
  stale: boolean;
  holds_until: string | null;
  last_seen: string | null;
  declared: number | null;
  applied: number | null;
  reported: number | null;
  owed: number | null;
  holds: number | null;
  failing: string[];
  report_age: string;
  /** The mesh-host version its reports name (V1); null until one does. */
  agent: string | null;
  /** Outside the skew rule, behind the control plane, or reporting no version (inventory.agent_versions). */
  outdated: boolean;
  /** Why, in words, when outdated. */
  agent_why: string | null;
}

export type FleetEvent = { kind: 'snapshot'; rows: FleetRow[] } | { kind: 'change'; rows: FleetRow[]; gone: string[] };

export interface Stores {
  inventory: Sql;
  assignment: Sql;
}

/** Read the fleet once: the console's live stream reads exactly this, and so does whatever measures it. */
export async function readFleet(s: Stores, f: FleetFilter = {}): Promise<FleetRow[]> {
  const status = await readNodeStatus(s.inventory, f);
  // A page names its nodes; the whole fleet reads every node's serials and failures in one pass.
  const names = f.limit === undefined ? undefined : status.map((r) => r.name as string);
  const [serials, failing] = await Promise.all([readSerials(s.assignment, names), readFailing(s.inventory, names)]);
  return status.map((r) => {
    const d = serials.get(r.name as string);
    const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    return {
      name: r.name as string,
      site: r.site as string,
      state: r.state as string,
      stale: r.stale as boolean,
      holds_until: r.holds_until ? (r.holds_until as Date).toISOString() : null,
      last_seen: r.last_seen ? (r.last_seen as Date).toISOString() : null,
      declared: d?.declared ?? null,
      applied: d?.applied ?? null,
      reported: num(r.reported_serial),
      owed: num(r.owed_serial),
      holds: num(r.holds),
      failing: (failing.get(r.name as string) ?? []).map((f) => f.id),
      report_age: r.report_age as string,
      agent: (r.agent_version as string | null) ?? null,
      outdated: Boolean(r.outdated),
      agent_why: r.outdated ? (r.agent_why as string) : null,
    };
  });
}

/** A page of the fleet as its page asks for it: the rows (FleetRow), where the next page starts (null: this is the last), and the counts by state. */
export interface FleetPage {
  rows: FleetRow[];
  next: string | null;
  counts: Awaited<ReturnType<typeof readFleetCounts>>;
}

/** The default page: what a screen shows and a person reads before narrowing. */
export const PAGE_SIZE = 100;

/** One page of the fleet (inventory.fleet_page) and the counts beside it (inventory.fleet_counts), read at once. */
export async function readFleetPage(s: Stores, f: FleetFilter): Promise<FleetPage> {
  const filter = { ...f, limit: f.limit ?? PAGE_SIZE };
  const [rows, counts] = await Promise.all([readFleet(s, filter), readFleetCounts(s.inventory, filter)]);
  return { rows, next: rows.length === filter.limit ? rows[rows.length - 1]!.name : null, counts };
}

export class LiveFleet {
  private rows = new Map<string, { row: FleetRow; json: string }>();
  private listeners = new Set<(e: FleetEvent) => void>();
  private timer: NodeJS.Timeout | undefined;
  private due = 0;
  private running: Promise<void> | undefined;
  private again = false;
  private unlisten: (() => Promise<void>) | undefined;
  private stopped = false;

  constructor(
    private stores: Stores,
    private log: (l: string) => void,
  ) {}

  async start(): Promise<void> {
    const l = await onInventoryChange(this.stores.inventory, () => {
      // A change committed while a read runs may not be in it: read once more.
      if (this.running) this.again = true;
      else this.soon(COALESCE_MS);
    });
    this.unlisten = l.unlisten;
    await this.refresh();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.unlisten?.();
  }

  current(): FleetRow[] {
    return [...this.rows.values()].map((r) => r.row);
  }

  subscribe(f: (e: FleetEvent) => void): () => void {
    f({ kind: 'snapshot', rows: this.current() });
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  /** Re-read within MS: an earlier re-read already set stands (a steady stream of heards must not put it off for ever). */
  private soon(ms: number): void {
    if (this.stopped) return;
    const due = Date.now() + ms;
    if (this.timer && this.due <= due) return;
    clearTimeout(this.timer);
    this.due = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, ms);
  }

  /** One re-read at a time; a change that arrives meanwhile gets one more. */
  async refresh(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          this.apply(await readFleet(this.stores));
        } while (this.again);
      } catch (err) {
        this.log(`console: could not read the fleet (${(err as Error).message}); trying again in ${AGES_MS / 1000} s`);
      } finally {
        this.running = undefined;
        clearTimeout(this.timer);
        this.timer = undefined;
        this.soon(this.nextEdge());
      }
    })();
    return this.running;
  }

  private apply(fresh: FleetRow[]): void {
    const changed: FleetRow[] = [];
    const seen = new Set<string>();
    for (const row of fresh) {
      seen.add(row.name);
      const json = JSON.stringify(row);
      if (this.rows.get(row.name)?.json !== json) {
        changed.push(row);
        this.rows.set(row.name, { row, json });
      }
    }
    const gone = [...this.rows.keys()].filter((n) => !seen.has(n));
    for (const n of gone) this.rows.delete(n);
    if (changed.length === 0 && gone.length === 0) return;
    for (const f of this.listeners) f({ kind: 'change', rows: changed, gone });
  }

  /** Milliseconds until the first node still `here` would cross the edge, or the first fresh one turn stale, or the next age tick. */
  private nextEdge(): number {
    let next = AGES_MS;
    const now = Date.now();
    for (const { row } of this.rows.values()) {
      if (!row.stale && row.holds_until) next = Math.min(next, Date.parse(row.holds_until) - now + 1000);
      // Wedged is here too: both end when the node falls silent.
      if ((row.state !== 'here' && row.state !== 'wedged') || !row.last_seen) continue;
      next = Math.min(next, Date.parse(row.last_seen) + HERE_SECONDS * 1000 - now + 1000);
    }
    return Math.max(next, COALESCE_MS);
  }
}
