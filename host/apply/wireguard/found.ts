// ADR 0105: a tunnel the mesh took over (host/overlay/take.ts, which keeps its
// account at accountPath below) and that somebody started again by hand beside
// the mesh's interface is said, not stopped. Stopping it would be the mesh acting on a thing it does not own
// any more; staying silent would leave a hub whose interface cannot hold its
// port, or a spoke where two interfaces with one key fight over every peer.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runAny } from '../../../src/sys/proc.js';

/** Where take keeps its account (not taken / taken / down). */
export const accountPath = (dir: string) => join(dir, 'overlay-take.json');

/**
 * The sentence to say when the tunnel IFACE took over is up again, or null.
 * Only after a takeover that ended "taken": before it, the found tunnel
 * running is the expected state.
 */
export async function foundStartedAgain(
  stateDir: string,
  iface: string,
  hub: boolean,
  port: number | undefined,
): Promise<string | null> {
  let acc: { state?: string; tunnel?: string; interface?: string; found?: { file?: string | null } };
  try {
    acc = JSON.parse(await readFile(accountPath(stateDir), 'utf8'));
  } catch {
    return null;
  }
  if (acc.state !== 'taken' || acc.interface !== iface || typeof acc.tunnel !== 'string') return null;
  if ((await runAny('ip', ['link', 'show', 'dev', acc.tunnel])).code !== 0) return null;
  const why = hub
    ? `a hub's ${iface} cannot hold ${port ? `port ${port}` : 'its port'} beside it`
    : `two interfaces with one key fight over every peer`;
  return `${acc.tunnel}, the tunnel ${iface} took over, was started again by hand beside it: it is left running (the mesh does not stop what it no longer owns), but ${why}. Take it down with wg-quick down ${acc.tunnel}, and leave ${acc.found?.file ?? `its file`} unused`;
}
