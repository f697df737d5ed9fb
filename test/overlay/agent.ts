// Runs one wireguard or firewall driver call inside a lab machine, as the host agent
// would: `nsenter -t PID -m -n node agent.js <op>` with a JSON request on
// stdin, the answer as JSON on stdout, the driver's log lines on stderr.
// The driver itself runs its plain production path; only where it runs differs.
import { readFileSync } from 'node:fs';
import { wireguardDriver } from '../../host/apply/wireguard/driver.js';
import { firewallDriver } from '../../host/apply/firewall.js';
import type { Driver, DriverContext } from '../../host/apply/driver.js';
import type { HeldEntry } from '../../src/wire/report.js';
import type { FirewallResource, WireguardResource } from '../../src/wire/resources.js';
import { hostConfig, driverSettings } from '../../host/config.js';

interface Request {
  resource: WireguardResource | FirewallResource;
  overlayKeyPath: string;
  stateDir: string;
}

const op = process.argv[2];
const req = JSON.parse(readFileSync(0, 'utf8')) as Request;
// The machine has a network namespace of its own: its firewall is loaded, as a real host's is.
const { MESH_HOST_FIREWALL: _shared, ...env } = process.env;
const ctx: DriverContext = {
  stateDir: req.stateDir,
  roots: [],
  openSealed: () => {
    throw new Error('no sealed blobs in the overlay lab');
  },
  overlayKeyPath: req.overlayKeyPath,
  ...driverSettings(hostConfig(env)),
  changed: new Set(),
  log: (line) => process.stderr.write(`${line}\n`),
};
const r = req.resource;
const driver = (r.kind === 'firewall' ? firewallDriver : wireguardDriver) as Driver<typeof r>;
const held: HeldEntry = {
  id: r.id,
  kind: r.kind,
  target: driver.target(r),
  origin: 'declared',
  digest: driver.digest(r),
};

try {
  let result: unknown;
  if (op === 'apply') result = await driver.apply(r, ctx);
  else if (op === 'observe') result = await driver.observe(r, ctx);
  else if (op === 'remove') result = await driver.remove(held, ctx);
  else if (op === 'restart') result = await driver.restart!(r, ctx);
  else throw new Error(`unknown op ${op}`);
  process.stdout.write(JSON.stringify({ ok: true, result: result ?? null }));
} catch (err) {
  process.stdout.write(JSON.stringify({ ok: false, error: (err as Error).message }));
}
