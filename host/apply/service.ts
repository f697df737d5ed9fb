// A long-running program. Under systemd where the machine has it; otherwise
// the host supervises it itself (containers, the lab, minimal machines).
import { existsSync } from 'node:fs';
import { posix } from 'node:path';
import type { ServiceResource } from '../../src/wire/resources.js';
import type { Driver } from './driver.js';
import { digestOf } from './digest.js';
import { observeProcess, removeProcess, startProcess, stopProcess } from './service_process.js';
import { applyUnit, observeUnit, removeUnit, restartUnit } from './service_systemd.js';
import { refuse } from '../../src/sys/errors.js';
import { isNodeName } from '../../src/wire/names.js';

// Checked on every call, not once: the lab runs hosts with and without it.
const hasSystemd = () => existsSync('/run/systemd/system');

function check(r: ServiceResource): void {
  if (!isNodeName(r.name)) {
    throw refuse(
      'MSH81',
      `Service name ${JSON.stringify(r.name)} is refused`,
      'names are [a-z][a-z0-9-]{0,62}. Fix the declaration',
    );
  }
  if (!Array.isArray(r.exec) || r.exec.length === 0 || !posix.isAbsolute(r.exec[0]!)) {
    throw refuse(
      'MSH82',
      `Service ${r.name} is refused`,
      'exec must be an argv whose first word is an absolute path. Fix the declaration',
    );
  }
}

const digest = (r: ServiceResource) => digestOf({ kind: 'service', name: r.name, exec: r.exec, workdir: r.workdir });

export const serviceDriver: Driver<ServiceResource> = {
  kind: 'service',
  target: (r) => r.name,
  digest,
  async observe(r, ctx) {
    check(r);
    return hasSystemd() ? observeUnit(r, digest(r)) : observeProcess(r, digest(r), ctx);
  },
  async apply(r, ctx) {
    check(r);
    if (hasSystemd()) {
      if ((await observeUnit(r, digest(r))) === 'ok') return false;
      await applyUnit(r, digest(r), ctx);
    } else {
      const seen = await observeProcess(r, digest(r), ctx);
      if (seen === 'ok') return false;
      if (seen === 'drift') await stopProcess(r.name, ctx); // running an argv no longer declared
      await startProcess(r, digest(r), ctx);
    }
    ctx.changed.add(r.id);
    return true;
  },
  async restart(r, ctx) {
    check(r);
    if (hasSystemd()) return restartUnit(r.name);
    await stopProcess(r.name, ctx);
    await startProcess(r, digest(r), ctx);
  },
  async remove(held, ctx) {
    if (hasSystemd()) return removeUnit(held.target);
    await removeProcess(held.target, ctx);
  },
};
