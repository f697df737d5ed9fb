// A declared file edited by hand is put back: the host reconciles against
// the declaration it keeps (D6, every 5 s in the lab) and tells the mesh
// what it corrected.
import type { Scenario } from './scenario.js';
import { fileModule, readOn } from './scenario.js';
import { waitApplied } from '../mesh_ops.js';
import { until } from '../handle.js';

const TARGET = 'b1';
const PATH = '/srv/lab/kept.txt';

export const drift: Scenario = {
  name: 'drift',
  proves: 'a file edited by hand is put back',
  async run(h, say) {
    const { content, owed } = await fileModule(h, 'lab-kept', TARGET, PATH);
    await waitApplied(
      h,
      owed.filter((d) => d.node === TARGET),
    );
    await until(
      async () => (await readOn(h, TARGET, PATH)) === content,
      10,
      `${PATH} on ${TARGET} never held what was declared`,
    );
    const hostMark = h.mark(h.hostLogPath(TARGET));
    const serveMark = h.mark(h.serviceLogPath('mesh-serve'));
    // /srv is the machine's own tmpfs: write it from inside.
    await h.ok(TARGET, ['/bin/sh', '-c', `echo 'edited by hand' > ${PATH}`]);
    say(`edited ${PATH} on ${TARGET} by hand`);
    await h.waitLog(
      h.hostLogPath(TARGET),
      new RegExp(`put back [^\\n]*file:${PATH.replace(/\//g, '\\/')}`),
      hostMark,
      30,
      `${TARGET} did not put ${PATH} back`,
    );
    await until(async () => (await readOn(h, TARGET, PATH)) === content, 10, `${PATH} on ${TARGET} was not restored`);
    await h.waitLog(
      h.serviceLogPath('mesh-serve'),
      new RegExp(`report: ${TARGET} put back [^\\n]*file:${PATH.replace(/\//g, '\\/')}`),
      serveMark,
      30,
      `the mesh was not told ${TARGET} put ${PATH} back`,
    );
    say(`${TARGET} put ${PATH} back and told the mesh`);
  },
};
