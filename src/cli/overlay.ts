// `mesh overlay show|hub|address`: the WireGuard graph the mesh computes (O1)
// and the two facts of it an operator decides.
import { afterChange, redeclareLine } from './redeclare.js';
import type { Program } from '../sys/program.js';
import { emit, table } from './print.js';
import { overlayShow, overlayRows, overlayDot } from '../overlay/show.js';
import { overlayHub, overlayAddress } from '../overlay/hub.js';
import { overlayWhatIf, type WhatIf } from '../assignment/what_if.js';
import { overlayWhy } from '../assignment/why.js';
import { refuse } from '../sys/errors.js';

export function registerOverlay(p: Program): void {
  showCommand(p);
  hubCommand(p);
  addressCommand(p);
  whatIfCommand(p);
  whyCommand(p);
}

function showCommand(p: Program): void {
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
}

function hubCommand(p: Program): void {
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
}

function addressCommand(p: Program): void {
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

function whatIfCommand(p: Program): void {
  p.prog
    .command('overlay what-if')
    .describe([
      'What the overlay loses if the nodes named in --down fail, read from the graph the declarations carry (the same as',
      "select * from overlay.strand_spokes('{HUB}'), overlay.lose_paths('{HUB}') and assignment.lose_openings('{HUB}')).",
      "A spoke reaches its peers directly and everything else through its route hub (its group's hub: the group of its",
      "address's /20 block among the hubs), and the hubs pass traffic between groups; so a hub failing strands its spokes:",
      'each keeps only its direct peers (spokes of its site) until the graph is computed again without the hub.',
      'Printed: the stranded spokes, the pairs that lose every path (from reaches to), the openings over the overlay',
      '(provisions, module and broker ports) whose sources lose their path, and the hub that would carry each once the hub',
      'is taken out of the graph (mesh overlay hub HUB --off), or "none" when no other hub would.',
    ])
    .option('--down', 'The nodes that fail, comma separated (HUB[,NODE...])')
    .option('--limit', 'Print at most this many lost pairs (0: all of them)', 100)
    .option('--json', 'Print as JSON')
    .example('overlay what-if --down hub1')
    .example('overlay what-if --down hub1,hub2 --json')
    .action(
      p.wrap(async (o: { down?: string | boolean; limit?: number; json?: boolean }) => {
        // None named is refused by overlay.check_members (MSHY0), as for a DBA or the console.
        const down = typeof o.down === 'string' ? o.down.split(',').filter(Boolean) : [];
        const limit = Number(o.limit ?? 100);
        if (!Number.isInteger(limit) || limit < 0)
          throw refuse(
            'MSHY4',
            `--limit ${JSON.stringify(o.limit)} is not a count`,
            'give a whole number; 0 prints every pair',
          );
        emit(await overlayWhatIf(down, limit === 0 ? null : limit), o, whatIfText);
      }),
    );
}

function whyCommand(p: Program): void {
  p.prog
    .command('overlay why <from> <to>')
    .describe([
      'Why FROM cannot reach TO over the overlay: the first fact that blocks it, looked for in this order, or "path open".',
      '  no edge           the graph gives them no path: not peers, and no hub to carry them',
      '  no opening        (with --port) no rule on TO admits FROM there; names the module, site or provision rule that would',
      '  end out of touch  FROM, TO or a hub between them (one, or two across groups) is not here (also: stale, failing)',
      "  key not applied   one side's overlay key changed and the other has not applied a declaration carrying it",
      '  declaration owed  a declaration owed to an end or a hub between them is not yet delivered',
      "The same answer as select * from assignment.explain_path('FROM', 'TO', PORT).",
    ])
    .option('--port', 'A TCP port on TO that FROM wants to reach')
    .option('--json', 'Print as JSON')
    .example('overlay why web1 db1')
    .example('overlay why web1 db1 --port 5432')
    .action(
      p.wrap(async (from: string, to: string, o: { port?: string | number; json?: boolean }) => {
        emit(
          await overlayWhy(String(from), String(to), o.port ?? null),
          o,
          (d) => `${d.from} -> ${d.to}${d.port ? `:${d.port}` : ''}: ${d.fact}
  ${d.detail}${
    d.remedy
      ? `
  remedy: ${d.remedy}`
      : ''
  }`,
        );
      }),
    );
}

function whatIfText(d: WhatIf): string {
  const carrier = (c: string | null) => c ?? 'none';
  const out = [`if ${d.down.join(', ')} fail${d.down.length === 1 ? 's' : ''}:`];
  if (!d.stranded.length && !d.pairsTotal && !d.openings.length) {
    out.push('  no path is lost: no spoke routes through it, and every pair it carries reaches the other way');
    return out.join('\n');
  }
  out.push(`\n${d.stranded.length} spoke(s) stranded (each keeps only its direct peers):`);
  out.push(
    table(
      d.stranded.map((s) => ({
        spoke: s.node,
        site: s.site,
        'hub lost': s.hub,
        'carried by': carrier(s.carriedBy),
        'stops reaching': s.lost,
      })),
      ['spoke', 'site', 'hub lost', 'carried by', 'stops reaching'],
    ),
  );
  out.push(
    `\n${d.pairsTotal} pair(s) lose every path (from reaches to)${d.pairs.length < d.pairsTotal ? `, the first ${d.pairs.length}` : ''}:`,
  );
  out.push(
    table(
      d.pairs.map((p) => ({ from: p.node, to: p.peer, 'hub lost': p.hub, 'carried by': carrier(p.carriedBy) })),
      ['from', 'to', 'hub lost', 'carried by'],
    ),
  );
  out.push(`\n${d.openings.length} opening(s) over the overlay become unreachable:`);
  out.push(
    table(
      d.openings.map((x) => ({
        node: x.node,
        port: `${x.proto} ${x.port}${x.portTo ? `-${x.portTo}` : ''}`,
        from: x.fromNode,
        why: x.why,
        lost: x.lostHub ?? `${x.node} is down`,
        'carried by': carrier(x.carriedBy),
      })),
      ['node', 'port', 'from', 'why', 'lost', 'carried by'],
    ),
  );
  out.push(
    d.carried
      ? '\nanother hub would carry every stranded spoke once the graph is computed again without the nodes down'
      : '\nno other hub would carry some of them: name another dialable node a hub (mesh overlay hub NODE)',
  );
  return out.join('\n');
}
