// A declaration forged on the broker -- right mesh, right node, a serial far
// ahead, signed by another key -- is refused by the node, nothing of it is
// applied, and it is reported to the mesh as forged, not as malformed (D1).
import { join } from 'node:path';
import type { Scenario } from './scenario.js';
import { readOn } from './scenario.js';
import { DIST, NODE } from '../handle.js';

const TARGET = 'b1';
const PATH = '/srv/lab/forged.txt';

export const forged: Scenario = {
  name: 'forged',
  proves: 'a forged declaration injected on the broker is refused and reported as forged',
  async run(h, say) {
    const hostMark = h.mark(h.hostLogPath(TARGET));
    const serveMark = h.mark(h.serviceLogPath('mesh-serve'));
    await h.ok(h.hub, [
      '/usr/bin/env',
      `MESH_HOME=${join(h.hubState(), 'home')}`,
      NODE,
      join(DIST, 'lab/inject_forged.js'),
      TARGET,
      PATH,
    ]);
    say(`forged a declaration for ${TARGET} (serial 1000000, another key) and published it on its queue`);
    await h.waitLog(
      h.hostLogPath(TARGET),
      /refused a declaration: forged: /,
      hostMark,
      30,
      `${TARGET} did not refuse the forgery as forged`,
    );
    say(`${TARGET} refused it as forged`);
    await h.waitLog(
      h.serviceLogPath('mesh-serve'),
      new RegExp(`report: ${TARGET} refused a declaration: forged: `),
      serveMark,
      30,
      `the mesh was not told ${TARGET} refused a forgery`,
    );
    say(`the mesh was told: ${TARGET} refused a declaration: forged`);
    if ((await readOn(h, TARGET, PATH)) !== null)
      throw new Error(`${PATH} exists on ${TARGET}: the forgery was applied`);
  },
};
