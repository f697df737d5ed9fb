// What the bundle raises, recorded in the host's own state as carried (D3),
// so no declaration ever removes the store, the broker or the control plane
// from under the mesh they run.
//
// The engine takes a list as the whole truth of an origin: a carried resource
// left out of a call would be removed. So the bundle plans every carried
// resource first and raises the plan step by step, each call applying all of
// it up to that step plus whatever a previous run already raised: a second
// run looks at everything again, finds it as it should be, and stops nothing.
import type { Resource, ResourceKind } from '../src/wire/resources.js';
import type { DriverContext } from '../host/apply/driver.js';
import { drivers as registered, type AnyDriver } from '../host/apply/registry.js';
import { apply, type ApplyOptions } from '../host/apply/engine.js';
import { overlayKeyPath } from '../host/identity.js';
import { readState } from '../host/apply/state.js';
import { hostConfig, driverSettings } from '../host/config.js';

export class Carried {
  readonly changed: string[] = [];
  private readonly opts: ApplyOptions;
  private held = new Set<string>();
  private upto = -1;

  /** `plan`: every resource the bundle carries, in the order they are raised. */
  constructor(
    private readonly plan: Resource[],
    hostDir: string,
    roots: string[],
    log: (line: string) => void,
  ) {
    this.opts = {
      stateDir: hostDir,
      roots,
      carried: true,
      // The bundle carries no sealed secret: its keys are its own files.
      openSealed: () => {
        throw new Error('the bundle carries no sealed secrets');
      },
      overlayKeyPath: overlayKeyPath(hostDir),
      ...driverSettings(hostConfig()),
      log,
    };
  }

  /** What a previous run raised: kept in every step, so a second run stops nothing it will raise again. */
  async load(): Promise<void> {
    this.held = new Set((await readState(this.opts.stateDir)).filter((h) => h.origin === 'carried').map((h) => h.id));
  }

  /** Raise the plan up to and including `id` (and keep what was raised before); throws naming what failed. */
  async upTo(id: string): Promise<string[]> {
    const at = this.plan.findIndex((r) => r.id === id);
    if (at < 0) throw new Error(`the bundle has no carried resource ${id}`);
    this.upto = Math.max(this.upto, at);
    const list = this.plan.filter((r, i) => i <= this.upto || this.held.has(r.id));
    const later = new Set(this.plan.filter((_, i) => i > this.upto).map((r) => r.id));
    const out = await apply(list, 'carried', { ...this.opts, drivers: deferring(later) });
    if (out.failed.length) {
      throw new Error(`could not raise ${out.failed.map((f) => `${f.id}: ${f.error}`).join('; ')}`);
    }
    for (const r of list) this.held.add(r.id);
    const now = [...out.changed, ...out.restarted, ...out.removed];
    this.changed.push(...now);
    return now;
  }
}

// What a previous run raised and this run has not reached yet is kept in the
// list (so it is not removed) but left alone: a broker that died is started
// again in its own step, after the ruleset and the store, never before.
function deferring(later: Set<string>): Map<ResourceKind, AnyDriver> {
  const out = new Map<ResourceKind, AnyDriver>();
  for (const [kind, d] of registered) {
    out.set(kind, {
      ...d,
      observe: (r: Resource, ctx: DriverContext) =>
        later.has(r.id) ? Promise.resolve('ok' as const) : d.observe(r, ctx),
      apply: (r: Resource, ctx: DriverContext) => (later.has(r.id) ? Promise.resolve(false) : d.apply(r, ctx)),
      ...(d.restart
        ? { restart: (r: Resource, ctx: DriverContext) => (later.has(r.id) ? Promise.resolve() : d.restart!(r, ctx)) }
        : {}),
    });
  }
  return out;
}

/** A carried file; `owner` a user name (root when absent). */
export const file = (path: string, content: string | Buffer, mode: string, owner?: string): Resource => ({
  kind: 'file',
  id: `file:${path}`,
  path,
  content: Buffer.from(content).toString('base64'),
  mode,
  ...(owner ? { owner } : {}),
});

/** argv that runs `argv` with exactly these variables added (the service driver hands only PATH). */
export function withEnv(env: Record<string, string>, argv: string[]): string[] {
  return ['/usr/bin/env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv];
}
