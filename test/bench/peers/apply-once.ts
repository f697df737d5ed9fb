// One apply by mesh-host's own engine, as its own process (what `puppet apply`
// and `ansible-playbook -c local` are): read a declaration's resources, check
// them with the parser the host runs on every declaration, apply them as the
// declared truth, print what changed. No broker and no signature here: the
// engine alone.  node apply-once.js RESOURCES.json ROOT STATE_DIR
import { readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseResources } from '../../../src/wire/parse_resources.js';
import { apply } from '../../../host/apply/engine.js';
import { hostConfig, driverSettings } from '../../../host/config.js';

const [file, root, state] = process.argv.slice(2);
if (!file || !root || !state) throw new Error('usage: apply-once.js RESOURCES.json ROOT STATE_DIR');
const t0 = performance.now();
const resources = parseResources(JSON.parse(readFileSync(file, 'utf8')));
mkdirSync(state, { recursive: true, mode: 0o700 });
const r = await apply(resources, 'declared', {
  stateDir: state,
  roots: [root],
  overlayKeyPath: join(state, 'overlay.key'),
  ...driverSettings(hostConfig()),
  log: () => {},
  openSealed: () => {
    throw new Error('no secrets in this declaration');
  },
});
process.stdout.write(
  JSON.stringify({
    changed: r.changed.length,
    failed: r.failed,
    held: r.held.length,
    applyMs: performance.now() - t0,
  }) + '\n',
);
if (r.failed.length) process.exitCode = 1;
