// What a host asks the mesh for on every connect (W3): its newest declaration,
// its last report and its floor (src/wire/last_report.ts). The ask carries the
// highest serial the host ever applied (host/serial.ts, D2), so a store that is
// behind the node (restored from a backup taken before the node's newest
// declarations, V3) continues the node's serials above it instead of issuing
// ones the node must refuse as replays. ONE definition: the host writes it
// (host/agent.ts), serve reads it (src/serve/handlers/recover.ts). Not signed:
// the broker vouches for the sender (user_id), and the serial moves only that
// node's own count, and only up.
import { isObject, parseJson, WireError } from './envelope.js';

export interface Recover {
  /** The highest serial the host applied; null from an agent that predates saying it (`{}`). */
  applied: number | null;
}

export function writeRecover(r: { applied: number }): Buffer {
  return Buffer.from(JSON.stringify({ v: 1, applied: r.applied }));
}

export function readRecover(bytes: Uint8Array): Recover {
  const v = parseJson(Buffer.from(bytes).toString('utf8'), 'recover');
  if (!isObject(v)) throw new WireError('malformed', 'recover is not a JSON object.');
  // An agent from before the ask carried its serial sends an empty object.
  if (Object.keys(v).length === 0) return { applied: null };
  if (v.v !== 1 || !Number.isSafeInteger(v.applied) || (v.applied as number) < 0)
    throw new WireError('malformed', 'recover is not {v:1, applied: a whole number of 0 or more}.');
  return { applied: v.applied as number };
}
