// The broker dies and every node comes back by itself: nothing on any node
// is touched. Where there is no systemd (the lab), the first node's
// mesh-host starts its carried broker again by itself, with backoff, and
// tells the mesh; the bundle run again afterwards finds everything as it was.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import type { Scenario } from './scenario.js';
import { until } from '../handle.js';
import { groupAlive } from '../../host/apply/proc.js';
import { nodeRows } from '../mesh_ops.js';

export const broker: Scenario = {
  name: 'broker',
  proves: 'the broker is stopped and restarted and every node comes back by itself',
  async run(h, say) {
    const nodes = h.enrolled();
    const marks = new Map(nodes.map((m) => [m, h.mark(h.hostLogPath(m))]));
    const serveMark = h.mark(h.serviceLogPath('mesh-serve'));
    const rec = JSON.parse(readFileSync(join(h.hostDir(h.hub), 'services', 'mesh-rabbitmq.pid'), 'utf8')) as {
      pid: number;
    };
    process.kill(-rec.pid, 'SIGTERM');
    // Wait for all of it to be gone: a broker still shutting down holds its
    // data and ports, and one started beside it would stop at once.
    await until(async () => !(await groupAlive(rec.pid)), 60, `the broker (process group ${rec.pid}) did not stop`);
    say(`stopped the broker (process group ${rec.pid})`);
    for (const m of nodes)
      await h.waitLog(
        h.hostLogPath(m),
        /lost the broker|cannot reach the broker/,
        marks.get(m)!,
        60,
        `${m} did not notice the broker go`,
      );
    say(`every node noticed: ${nodes.join(', ')}`);
    await h.waitLog(
      h.hostLogPath(h.hub),
      /service mesh-rabbitmq had died; started it again/,
      marks.get(h.hub)!,
      60,
      `${h.hub}'s host did not start its broker again`,
    );
    say(`${h.hub}'s host started the broker again by itself`);
    for (const m of nodes)
      await h.waitLog(h.hostLogPath(m), /connected to /, marks.get(m)!, 90, `${m} did not come back`);
    await h.waitLog(
      h.serviceLogPath('mesh-serve'),
      /consuming mesh\.control/,
      serveMark,
      90,
      'mesh serve did not come back',
    );
    say(`every node connected again by itself: ${nodes.join(', ')}`);
    await h.waitLog(
      h.serviceLogPath('mesh-serve'),
      new RegExp(`report: ${h.hub} put back [^\\n]*service:mesh-rabbitmq`),
      serveMark,
      90,
      `the mesh was not told ${h.hub} restarted its broker`,
    );
    say(`the mesh was told: ${h.hub} put back service:mesh-rabbitmq`);
    const b = await h.runBundle();
    if (b.code !== 0) throw new Error(`the bundle run again failed: ${b.stderr}`);
    if (!/nothing changed/.test(b.stdout))
      throw new Error(`the bundle found something to change after the host restarted the broker:\n${b.stdout}`);
    say('the bundle run again: nothing changed');
    await until(
      async () => (await nodeRows(h)).filter((n) => nodes.includes(n.name)).every((n) => n.state === 'here'),
      60,
      'not every node reads "here" again',
    );
  },
};
