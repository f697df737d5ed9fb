// A service where systemd runs: a unit /etc/systemd/system/mesh-<name>.service.
// Not exercised by the tests (the test machine has no systemd).
import { readFile, unlink } from 'node:fs/promises';
import type { ServiceResource } from '../../src/wire/resources.js';
import type { DriverContext, Observed } from './driver.js';
import { writeAtomic } from '../../src/sys/atomic.js';
import { run, runAny } from '../../src/sys/proc.js';

// systemctl and podman answer in seconds; five minutes is a hung tool (or a slow image pull), said as such.
const LIMIT = { timeoutMs: 300_000 };

const unitName = (name: string) => `mesh-${name}.service`;
const unitPath = (name: string) => `/etc/systemd/system/${unitName(name)}`;

// systemd splits ExecStart itself: quote every word, and double $ and % so
// systemd expands nothing.
const quote = (arg: string) =>
  `"${arg.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\$/g, '$$$$').replace(/%/g, '%%').replace(/\n/g, '\\n')}"`;

export function unitText(r: ServiceResource, digest: string): string {
  return [
    '[Unit]',
    `Description=mesh service ${r.name}`,
    `# mesh.digest=${digest}`,
    '',
    '[Service]',
    `ExecStart=${r.exec.map(quote).join(' ')}`,
    `WorkingDirectory=${quote(r.workdir ?? '/')}`,
    'KillMode=control-group',
    'TimeoutStopSec=5',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

export async function observeUnit(r: ServiceResource, digest: string): Promise<Observed> {
  const have = await readFile(unitPath(r.name), 'utf8').catch(() => null);
  if (have === null) return 'absent';
  if (have !== unitText(r, digest)) return 'drift';
  const active = await runAny('systemctl', ['is-active', '--quiet', unitName(r.name)], LIMIT);
  return active.code === 0 ? 'ok' : 'absent';
}

export async function applyUnit(r: ServiceResource, digest: string, ctx: DriverContext): Promise<void> {
  const text = unitText(r, digest);
  const have = await readFile(unitPath(r.name), 'utf8').catch(() => null);
  if (have !== text) {
    await writeAtomic(unitPath(r.name), text, 0o644);
    await run('systemctl', ['daemon-reload'], LIMIT);
    await run('systemctl', ['enable', unitName(r.name)], LIMIT);
    await run('systemctl', ['restart', unitName(r.name)], LIMIT);
  } else {
    await run('systemctl', ['start', unitName(r.name)], LIMIT);
  }
  ctx.log(`service ${r.name} running under systemd`);
}

export async function restartUnit(name: string): Promise<void> {
  await run('systemctl', ['restart', unitName(name)], LIMIT);
}

export async function removeUnit(name: string): Promise<void> {
  await runAny('systemctl', ['disable', '--now', unitName(name)], LIMIT);
  await unlink(unitPath(name)).catch((err) => {
    if (err.code !== 'ENOENT') throw err;
  });
  await run('systemctl', ['daemon-reload'], LIMIT);
}
