// The contract every resource kind's driver keeps. The engine (engine.ts)
// orders the drivers, records origins and decides removals; a driver knows
// only how to look at, make and unmake one kind of thing on this machine.
import type { Resource } from '../../src/wire/resources.js';
import type { HeldEntry } from '../../src/wire/report.js';

export interface DriverContext {
  /** The host's own state directory (0700). Drivers keep pid files etc. under it. */
  stateDir: string;
  /** Absolute directories a declared path may live under; anything else is refused. */
  roots: string[];
  /** Opens a blob sealed to this node's sealing key (S1). */
  openSealed(blob: string): Uint8Array;
  /** Path of the node's overlay private key file (the WireGuard key). */
  overlayKeyPath: string;
  /** Where wg-quick files live (MESH_WG_DIR). */
  wgDir: string;
  /** False: the firewall is held, not loaded (MESH_HOST_FIREWALL=off). */
  firewall: boolean;
  /** The root of the dpkg database packages are installed into (MESH_HOST_DPKG_ROOT); / unless set. */
  dpkgRoot?: string;
  /**
   * True for what the first node's bundle raises (its own units and files): the
   * protected paths (paths.ts) guard the host against declarations, and these are
   * exactly mesh's own files, under the roots the bundle names for itself.
   */
  carried?: boolean;
  /**
   * True in the apply of a received declaration, after it was kept (D7): a
   * file written now need not be forced to disk, since the next start puts
   * back from the kept declaration whatever a power cut lost.
   */
  journaled?: boolean;
  /** What the agent resource needs of the running agent (V2): its package's bytes, and a restart into it. Absent outside a running agent. */
  agent?: AgentHooks;
  /** Ids and absolute paths changed so far in this apply (D4 restart-on). */
  changed: Set<string>;
  log(line: string): void;
}

export interface AgentHooks {
  /** The package's bytes, fetched over the broker; rejects when they do not come within the wait. */
  fetch(sha256: string, size: number): Promise<Buffer>;
  /** Exit once this apply is reported, to be started again from the package root's current version. */
  restart(): void;
}

export type Observed = 'ok' | 'drift' | 'absent';

export interface Driver<R extends Resource = Resource> {
  kind: R['kind'];
  /** The path or name recorded in HeldEntry.target. */
  target(r: R): string;
  /** sha256 hex of the desired state. */
  digest(r: R): string;
  /** Does the machine hold r as declared? */
  observe(r: R, ctx: DriverContext): Promise<Observed>;
  /** Make the machine hold r; true when anything changed. Idempotent. */
  apply(r: R, ctx: DriverContext): Promise<boolean>;
  /** Restart a running thing so it reflects its files (D4). Optional per kind. */
  restart?(r: R, ctx: DriverContext): Promise<void>;
  /** Unmake what was applied, knowing only what HeldEntry records. */
  remove(held: HeldEntry, ctx: DriverContext): Promise<void>;
}
