// A node's report acknowledges the declaration it applied and those it
// skipped (assignment.acknowledge); serve acknowledges those that arrive
// together in one statement, as it records the reports themselves
// (src/inventory/reports.ts). Idempotent: a redelivery acknowledges again.
import type { Sql } from '../store/connect.js';
import { Coalescer } from '../sys/coalesce.js';

export interface Ack {
  node: string;
  /** The serial applied; 0 for a report that applied none (a failure naming what it skipped). */
  serial: number;
  superseded: number[];
}

/** Acknowledges on SQL, those arriving together in one statement (a failure fails each of them, to be tried again). */
export function acknowledger(sql: Sql, max = 64): (ack: Ack) => Promise<void> {
  const batches = new Coalescer<Ack, void>(async (acks) => {
    // In node order, so two serves acknowledging the same nodes lock their rows in the same order.
    const sorted = [...acks].sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
    await sql`select count(assignment.acknowledge(a.node, a.serial, a.superseded))
      from jsonb_to_recordset(${sql.json(sorted as never)}) as a(node text, serial bigint, superseded bigint[])`;
    return acks.map(() => undefined);
  }, max);
  return (ack) => batches.submit(ack);
}
