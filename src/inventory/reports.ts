// Serve's record of what nodes report, many reports a round trip
// (inventory.record_reports, sql/inventory/0150): after a declaration every
// node reports at once, and one transaction a report cost more than the
// reports' own rows. Each report still succeeds or fails alone.
import type { Sql } from '../store/connect.js';
import { Coalescer } from '../sys/coalesce.js';
import type { Report } from '../wire/report.js';

/** One report as inventory.record_reports reads it. */
export interface ReportEntry {
  node: string;
  /** Recorded once per message: a redelivery moves last_seen only. */
  message_id: string | null;
  agent: string | null;
  refused: { serial: number | null; fault: string; reason: string } | null;
  packages: unknown;
  corrected: string[];
  failed: { id: string; error: string }[];
  serial: number;
  held: unknown;
  /** Seconds since 1970. */
  holds_until: number | null;
}

/** What recording a report found: whether it was the first delivery, and what the caller tells or asks next. */
export interface Recorded {
  first: boolean;
  /** How many times in a row the node has now said this refusal (inventory.record_refusal folds repeats). */
  times: number;
  /** The node now runs another agent version than it said before: the kinds it may be declared changed with it. */
  upgraded: boolean;
  /** The node's package change did not come out at the list it named: it is asked for its whole list. */
  resync: boolean;
}

// PostgreSQL text cannot hold NUL, and a host quotes what it refused (random
// bytes among them): what it says is kept with NUL shown as U+FFFD.
const storable = (s: string) => s.replace(/\u0000/g, '\uFFFD');

/** Report R from node NODE, delivered as MESSAGEID, as the entry inventory.record_reports reads. */
export function reportEntry(node: string, r: Report, messageId: string | null): ReportEntry {
  return {
    node,
    message_id: messageId,
    agent: r.agent ?? null,
    refused: r.refused
      ? { serial: r.refused.serial ?? null, fault: r.refused.fault, reason: storable(r.refused.reason) }
      : null,
    packages: r.packages ?? null,
    corrected: r.corrected.map(storable),
    failed: r.failed.map((f) => ({ id: storable(f.id), error: storable(f.error) })),
    serial: r.serial,
    held: r.held,
    holds_until: r.holdsUntil ?? null,
  };
}

/** The store's refusal of one report of a batch, as the driver would have thrown it alone: its SQLSTATE is its code. */
class ReportRefused extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ReportRefused';
  }
}

/** Records reports on SQL, those arriving together in one statement; each call resolves with its own outcome or rejects with its own refusal. */
export function reportRecorder(sql: Sql, max = 64): (entry: ReportEntry) => Promise<Recorded> {
  const batches = new Coalescer<ReportEntry, Recorded | ReportRefused>(async (entries) => {
    const rows = await sql`select ordinal, first_delivery, times, upgraded, resync, error_code, error_message
      from inventory.record_reports(${entries.map((e) => JSON.stringify(e))}::text[]) order by ordinal`;
    return rows.map((row) =>
      row.error_code
        ? new ReportRefused(row.error_code as string, row.error_message as string)
        : {
            first: row.first_delivery as boolean,
            times: row.times as number,
            upgraded: row.upgraded as boolean,
            resync: row.resync as boolean,
          },
    );
  }, max);
  return async (entry) => {
    const o = await batches.submit(entry);
    if (o instanceof ReportRefused) throw o;
    return o;
  };
}
