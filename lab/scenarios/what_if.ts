// What-if and why against real pings (Q2). Before anything is stopped,
// `mesh overlay why` says "path open" for every ordered pair that pings.
// Then, for each hub: `mesh overlay what-if --down HUB` predicts the pairs
// that lose every path; the hub is stopped as a hub (its WireGuard traffic
// dropped in a table of the lab's own, beside the mesh's, so its control
// plane and its agent's reconcile go on untouched); the ping matrix must
// match the prediction pair for pair (a pair with the stopped hub at one end
// fails, every other pair pings unless predicted lost); then the hub comes
// back and every path pings again.
import type { Scenario } from './scenario.js';
import { overlayNodes, pingMatrix, waitMatrix, renderMatrix, allOpen, type Matrix } from '../mesh_ops.js';
import { until, type LabHandle } from '../handle.js';

const TABLE = 'labdown';

interface WhatIfJson {
  pairs: { node: string; peer: string; hub: string; carriedBy: string | null }[];
  pairsTotal: number;
}

/** Drop every WireGuard datagram to or from the hub's listen port: the hub is down as a hub. */
async function stopHub(h: LabHandle, hub: string, port: number): Promise<void> {
  const nft = (...a: string[]) => h.ok(hub, ['/usr/sbin/nft', ...a]);
  await nft('add', 'table', 'inet', TABLE);
  await nft('add', 'chain', 'inet', TABLE, 'in', '{ type filter hook input priority -300 ; policy accept ; }');
  await nft('add', 'chain', 'inet', TABLE, 'out', '{ type filter hook output priority -300 ; policy accept ; }');
  await nft('add', 'rule', 'inet', TABLE, 'in', 'udp', 'dport', String(port), 'drop');
  await nft('add', 'rule', 'inet', TABLE, 'out', 'udp', 'sport', String(port), 'drop');
}

const startHub = (h: LabHandle, hub: string) => h.ok(hub, ['/usr/sbin/nft', 'delete', 'table', 'inet', TABLE]);

/** The pairs where the matrix and the prediction differ, as "a>b ping ok, predicted lost". */
function differences(m: Matrix, down: string, lost: Set<string>): string[] {
  const out: string[] = [];
  for (const a of m.nodes)
    for (const b of m.nodes) {
      if (a === b) continue;
      const predictedOk = a !== down && b !== down && !lost.has(`${a}>${b}`);
      const ok = m.ok[a]?.[b] ?? false;
      if (ok !== predictedOk)
        out.push(`${a}>${b} ping ${ok ? 'ok' : 'failed'}, predicted ${predictedOk ? 'open' : 'lost'}`);
    }
  return out;
}

export const whatIf: Scenario = {
  name: 'what-if',
  proves:
    'why says path open for every pair that pings; for each hub, what-if --down predicts the pairs a stopped hub loses, pair for pair with the pings',
  async run(h, say) {
    const g = await overlayNodes(h);
    if (!g) throw new Error('`mesh overlay show` is not available: the overlay cannot be checked');
    const before = await waitMatrix(h);
    if (!before || !allOpen(before.matrix)) throw new Error('not every path pings before anything is stopped');
    for (const a of before.matrix.nodes)
      for (const b of before.matrix.nodes) {
        if (a === b) continue;
        const w = JSON.parse(await h.meshOk(['overlay', 'why', a, b, '--json'])) as { fact: string; detail: string };
        if (w.fact !== 'path open')
          throw new Error(`${a} pings ${b}, but mesh overlay why says ${w.fact}: ${w.detail}`);
      }
    say(`why: path open for all ${before.matrix.nodes.length * (before.matrix.nodes.length - 1)} pairs that ping`);

    const show = JSON.parse(await h.meshOk(['overlay', 'show', '--json'])) as { listenPort: number };
    const hubs = g.nodes.filter((n) => n.hub).map((n) => n.name);
    if (!hubs.length) throw new Error('the lab has no hub');
    for (const hub of hubs) {
      const w = JSON.parse(
        await h.meshOk(['overlay', 'what-if', '--down', hub, '--limit', '0', '--json']),
      ) as WhatIfJson;
      const lost = new Set(w.pairs.map((p) => `${p.node}>${p.peer}`));
      if (w.pairsTotal !== lost.size)
        throw new Error(`what-if counts ${w.pairsTotal} lost pairs but lists ${lost.size}`);
      say(`what-if --down ${hub}: ${lost.size} pair(s) lose every path: ${[...lost].join(', ') || 'none'}`);
      await stopHub(h, hub, show.listenPort);
      try {
        let m: Matrix | undefined;
        await until(
          async () => {
            m = await pingMatrix(h, before.addresses);
            return differences(m, hub, lost).length === 0;
          },
          30,
          () =>
            `with ${hub} stopped the pings do not match what-if --down ${hub}: ${differences(m!, hub, lost).join('; ')}\n${renderMatrix(m!, before.addresses)}`,
        );
        say(`${hub} stopped: the ping matrix matches the prediction pair for pair`);
        say(renderMatrix(m!, before.addresses));
      } finally {
        await startHub(h, hub);
      }
      const back = await waitMatrix(h);
      if (!back || !allOpen(back.matrix)) throw new Error(`${hub} is back, but not every path pings again`);
      say(`${hub} back: every path pings again`);
    }
  },
};
