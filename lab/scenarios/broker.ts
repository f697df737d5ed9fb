// The broker is stopped and started again, and every node comes back by
// itself: nothing on any node is touched. The broker is started again the
// way the first node carries it -- by running the bundle again, which finds
// only the broker missing and raises only that.
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
    const rec = JSON.parse(readFileSync(join(h.hostDir(h.hub), 'services', 'mesh-rabbitmq.pid'), 'utf8')) as { pid: number };
    process.kill(-rec.pid, 'SIGTERM');
    // Wait for all of it to be gone: a broker still shutting down holds its
    // data and ports, and one started beside it would stop at once.
    await until(async () => !(await groupAlive(rec.pid)), 60, `the broker (process group ${rec.pid}) did not stop`);
    say(`stopped the broker (process group ${rec.pid})`);
    for (const m of nodes) await h.waitLog(h.hostLogPath(m), /lost the broker|cannot reach the broker/, marks.get(m)!, 60, `${m} did not notice the broker go`);
    say(`every node noticed: ${nodes.join(', ')}`);
    const b = await h.runBundle();
    if (b.code !== 0) throw new Error(`the bundle could not start the broker again: ${b.stderr}`);
    const changed = b.stdout.split('\n').filter((l) => /^(nftables|store|broker|control plane|host):/.test(l) && !l.endsWith('as it was'));
    say(`bundle again: ${changed.join('; ')}`);
    if (!changed.some((l) => l.startsWith('broker:') && l.includes('service:mesh-rabbitmq')) || changed.length !== 1) throw new Error(`the bundle did not start the broker again, in its own step and nothing else:\n${b.stdout}`);
    for (const m of nodes) await h.waitLog(h.hostLogPath(m), /connected to /, marks.get(m)!, 90, `${m} did not come back`);
    await h.waitLog(h.serviceLogPath('mesh-serve'), /consuming mesh\.control/, serveMark, 90, 'mesh serve did not come back');
    say(`every node connected again by itself: ${nodes.join(', ')}`);
    await until(async () => (await nodeRows(h)).filter((n) => nodes.includes(n.name)).every((n) => n.state === 'here'), 60, 'not every node reads "here" again');
  },
};

