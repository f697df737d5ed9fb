// A broker short of memory or disk holds every connection that publishes
// (connection.blocked) and lets it go when the alarm clears (unblocked). A
// publisher that follows its connection's hold knows why it waits, says so
// once each way, and need not guess from confirms that never come.
import type { Connection } from './connect.js';

export interface Hold {
  /** Why the broker holds this connection's publishes now (its alarm), or undefined. */
  readonly reason: string | undefined;
}

/** CONN's hold, said through LOG as "the broker holds WHAT (why); MEANWHILE" and "the broker lets WHAT go again". */
export function followHold(conn: Connection, what: string, meanwhile: string, log: (line: string) => void): Hold {
  let reason: string | undefined;
  conn.on('blocked', (why: unknown) => {
    reason = String(why || 'a resource alarm');
    log(`the broker holds ${what} (${reason}); ${meanwhile}`);
  });
  conn.on('unblocked', () => {
    reason = undefined;
    log(`the broker lets ${what} go again`);
  });
  return {
    get reason() {
      return reason;
    },
  };
}
