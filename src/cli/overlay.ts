// `mesh overlay show|hub|address`: the WireGuard graph the mesh computes (O1)
// and the two facts of it an operator decides.
import { afterChange, redeclareLine } from './redeclare.js';
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { overlayShow, overlayRows, overlayDot } from '../overlay/show.js';
import { overlayHub, overlayAddress } from '../overlay/hub.js';

export function registerOverlay(p: Program): void {
  p.prog
    .command('overlay show')
    .describe([
      "The WireGuard graph the mesh computes, as declarations will carry it: each node's address and its peers.",
      'Each spoke peers with one hub (hubs divide the spokes by address block) and routes the whole range through it; hubs peer with each other.',
      'Two spokes peer directly only at one site and only when one of them can be dialled; a node behind NAT keeps its paths open with keepalives.',
      'A hub holds at most overlay.settings.hub_spokes spokes: declare refuses when the spokes need more hubs than there are.',
      '--dot prints Graphviz: mesh overlay show --dot | dot -Tsvg > overlay.svg (double boxes are hubs, dashed lines kept alive from behind NAT).',
    ])
    .option('--json', 'Print as JSON')
    .option('--dot', 'Print as Graphviz DOT')
    .example('overlay show')
    .example('overlay show --dot | dot -Tpng > overlay.png')
    .action(
      p.wrap(async (o: { json?: boolean; dot?: boolean }) => {
        const g = await overlayShow();
        if (o.dot) {
          process.stdout.write(overlayDot(g) + '\n');
          return;
        }
        emit(
          g,
          o,
          (d) =>
            `overlay ${d.network} on ${d.interface}, dialable nodes listen on ${d.listenPort}\n` +
            table(overlayRows(d), ['node', 'site', 'address', 'role', 'peer', 'endpoint', 'allowed', 'keepalive']),
        );
      }),
    );

  p.prog
    .command('overlay hub <node>')
    .describe([
      'Make NODE a hub: the spokes of its share peer with it, and spokes that cannot reach each other go through it (it forwards',
      'from the overlay to the overlay only, never to or from its other networks). A hub must be dialable. --off makes it a spoke again. Every node whose composition changes is re-declared.',
    ])
    .option('--off', 'Stop NODE being a hub')
    .option('--json', 'Print as JSON')
    .example('overlay hub gw1')
    .example('overlay hub gw1 --off')
    .action(
      p.wrap(async (node: string, o: { off?: boolean; json?: boolean }) => {
        const r = await afterChange(await overlayHub(String(node), !o.off));
        emit(
          r,
          o,
          (d) =>
            `${d.node} ${d.hub ? (d.changed ? 'is now a hub' : 'was already a hub') : d.changed ? 'is no longer a hub' : 'was not a hub'}\n${redeclareLine(d.redeclared, d)}`,
        );
      }),
    );

  p.prog
    .command('overlay address <node> <address>')
    .describe([
      "Pin NODE's overlay address, e.g. to the address of a tunnel it had before the mesh (mesh-host overlay take).",
      'It must lie in the overlay range and be held by no other node. Every node whose composition changes is re-declared.',
    ])
    .option('--json', 'Print as JSON')
    .example('overlay address web1 10.99.0.7')
    .action(
      p.wrap(async (node: string, address: string, o: { json?: boolean }) => {
        const r = await afterChange(await overlayAddress(String(node), String(address)));
        emit(
          r,
          o,
          (d) =>
            `${d.node} ${d.changed ? 'now has' : 'already had'} overlay address ${d.address}\n${redeclareLine(d.redeclared, d)}`,
        );
      }),
    );
}
