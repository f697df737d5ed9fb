// A second process applying carried resources into a host's state dir, as a
// bundle re-run does (bundle/carried.ts): argv STATE_DIR ROOT. Says "applying"
// before it asks, and "applied" once its record is written.
import { join } from 'node:path';
import { apply } from '../../host/apply/engine.js';
import { file, openSealed } from './helpers.js';
import { hostConfig, driverSettings } from '../../host/config.js';

const [stateDir, root] = process.argv.slice(2) as [string, string];
console.log('applying');
await apply([file(join(root, 'carried'), 'from the bundle')], 'carried', {
  stateDir,
  roots: [root],
  openSealed,
  overlayKeyPath: join(stateDir, 'overlay.key'),
  ...driverSettings(hostConfig()),
});
console.log('applied');
