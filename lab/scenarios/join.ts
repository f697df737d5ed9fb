// A third machine joins: it enrols by token, and with no command typed the
// mesh declares what the join changed (serve, at the enrolment: W2),
// and the others' interfaces take the new peer -- the hub's live interface
// routes to its address, and every path, the new one's included, pings.
import type { Scenario } from './scenario.js';
import { joinMachine, waitSettled, overlayNodes, waitMatrix, renderMatrix, allOpen } from '../mesh_ops.js';
import { until } from '../handle.js';
import { runAny } from '../../src/sys/proc.js';

const NEW = 'b3';

export const join: Scenario = {
  name: 'join',
  proves: "a third node joins and the others' interfaces take the new peer",
  async run(h, say) {
    if (h.state.machines[NEW]?.enrolled) {
      // Run again: make it a fresh machine first, so the join is a real one.
      say(`${NEW} is already enrolled: retiring it and wiping its machine to join it afresh`);
      await h.stopHost(NEW);
      await h.meshOk(['node', 'retire', NEW]);
      for (const p of (await runAny('ip', ['netns', 'pids', `${h.state.id}-${NEW}`])).stdout
        .split('\n')
        .filter(Boolean)
        .map(Number)) {
        if (p !== h.state.machines[NEW]!.pid) {
          try {
            process.kill(p, 'SIGKILL');
          } catch {
            /* gone */
          }
        }
      }
      await h.ok(NEW, ['/bin/rm', '-rf', h.hostDir(NEW)]);
      h.state.machines[NEW]!.enrolled = false;
      h.save();
      // The retirement itself re-declared the nodes it changed.
      await waitSettled(h);
    }
    await joinMachine(h, NEW, say);
    const nodes = await waitSettled(h);
    say(
      `no declare typed: every node's newest declaration delivered (${nodes.map((n) => `${n.name}#${n.reported_serial}`).join(', ')} reported)`,
    );
    const g = await overlayNodes(h);
    if (!g) throw new Error('`mesh overlay show` is not available: the overlay cannot be checked');
    const me = g.nodes.find((n) => n.name === NEW);
    if (!me) throw new Error(`${NEW} is not in the overlay graph`);
    // Every hub's live interface must hold the new node's key, routing its address.
    for (const hub of g.nodes.filter((n) => n.hub)) {
      await until(
        async () => {
          const r = await h.run(hub.name, ['/usr/bin/wg', 'show', g.interface, 'allowed-ips']);
          return r.stdout.split('\n').some((l) => l.startsWith(me.publicKey) && l.includes(`${me.address}/32`));
        },
        30,
        `${hub.name}'s ${g.interface} did not take ${NEW} (${me.publicKey}, ${me.address}) as a peer`,
      );
      say(`${hub.name}'s ${g.interface} holds ${NEW} as a peer (${me.address})`);
    }
    const m = await waitMatrix(h);
    say(renderMatrix(m!.matrix, m!.addresses));
    if (!m!.matrix.nodes.includes(NEW) || !allOpen(m!.matrix))
      throw new Error('not every path over the overlay is open after the join');
  },
};
