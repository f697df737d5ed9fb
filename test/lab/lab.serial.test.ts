// The lab, whole: the README's first command brings a real mesh up in
// network namespaces (the first node by the bundle, two machines by token,
// wireguard-go, NAT), every overlay path pings, a second bundle run changes
// nothing, each scenario passes, and `down` leaves no namespace, process or
// interface behind. Serial: it raises its own PostgreSQL and RabbitMQ inside
// the hub's namespace and wants the machine's cores to itself.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { labUp, labDown, labShow } from '../../lab/lifecycle.js';
import type { LabHandle } from '../../lab/handle.js';
import { runAny } from '../../src/sys/proc.js';
import { SCENARIOS } from '../../lab/scenarios/index.js';

const dir = mkdtempSync('/tmp/mesh-lab-test-');
const say = (l: string) => console.log(l);
let h: LabHandle;

const lab = suite('lab');

lab.before(async () => {
  h = await labUp({ dir, say });
});

lab.after(async () => {
  // Whatever failed above, nothing of the lab stays on the machine.
  await labDown({ dir, say }).catch((err) => say(`teardown: ${(err as Error).message}`));
  rmSync(dir, { recursive: true, force: true });
});

lab('bring-up prints the nodes, the overlay and a ping matrix with every path open', async () => {
  const lines: string[] = [];
  const open = await labShow(h, (l) => {
    lines.push(l);
    say(l);
  });
  const text = lines.join('\n');
  for (const m of ['hub', 'b1', 'b2'])
    assert.match(text, new RegExp(`^${m}\\s+\\S+\\s+here`, 'm'), `${m} is not "here" in mesh node list`);
  assert.ok(open, 'not every overlay path pings');
});

lab('the bundle run again on the first node changes nothing and says so', async () => {
  const r = await h.runBundle();
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /nothing changed: hub already carries/);
});

for (const s of SCENARIOS) {
  lab(`scenario ${s.name}: ${s.proves}`, async () => {
    await s.run(h, (l) => say(`  ${l}`));
  });
}

lab('down leaves no namespace, process or interface behind', async () => {
  const id = h.state.id;
  await labDown({ dir, say });
  const ns = (await runAny('ip', ['netns', 'list'])).stdout.split('\n').filter((l) => l.startsWith(`${id}-`));
  assert.equal(ns, [], 'namespaces left');
  const links = (await runAny('ip', ['-o', 'link'])).stdout.split('\n').filter((l) => l.includes(id));
  assert.equal(links, [], 'interfaces left in the root namespace');
  const procs: string[] = [];
  for (const p of readdirSync('/proc').filter((x) => /^\d+$/.test(x))) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ');
    } catch {
      continue;
    }
    if (cmd.includes(dir)) procs.push(`${p}: ${cmd}`);
  }
  assert.equal(procs, [], 'processes of the lab left running');
});

lab.run();
