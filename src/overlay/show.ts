// `mesh overlay show`: the peer graph exactly as declarations will carry it,
// read from the same SQL views (overlay.member, overlay.peering) compose uses.
import { withStore } from '../store/with_store.js';
import type { Sql } from '../store/connect.js';

export interface ShownPeer {
  peer: string;
  endpoint: string | null;
  allowedIps: string[];
  keepalive: number | null;
  route: boolean;
}
export interface ShownNode {
  name: string;
  site: string;
  address: string;
  hub: boolean;
  dialable: string | null;
  publicKey: string;
  peers: ShownPeer[];
}
export interface Overlay {
  network: string;
  listenPort: number;
  interface: string;
  nodes: ShownNode[];
}

export async function overlayShow(): Promise<Overlay> {
  return withStore('overlay', async (sql) => {
    // Addresses are allocated before the first declaration that carries them;
    // doing it here too shows the graph declare will send, not a smaller one.
    await sql`select overlay.allocate_addresses()`;
    return readOverlay(sql);
  });
}

/** The graph as it stands, on a store already open: read only (the console shows what overlay show prints). */
export async function readOverlay(sql: Sql): Promise<Overlay> {
  const [s] = await sql`select network::text as network, listen_port, interface from overlay.settings`;
  const members =
    await sql`select name, site, host(address) as address, hub, dialable, public_key from overlay.member order by name`;
  const edges =
    await sql`select node, peer, endpoint, allowed_ips, keepalive, route from overlay.peering order by node, peer`;
  return {
    network: s!.network as string,
    listenPort: s!.listen_port as number,
    interface: s!.interface as string,
    nodes: members.map((m) => ({
      name: m.name as string,
      site: m.site as string,
      address: m.address as string,
      hub: m.hub as boolean,
      dialable: (m.dialable as string | null) ?? null,
      publicKey: m.public_key as string,
      peers: edges
        .filter((e) => e.node === m.name)
        .map((e) => ({
          peer: e.peer as string,
          endpoint: (e.endpoint as string | null) ?? null,
          allowedIps: e.allowed_ips as string[],
          keepalive: (e.keepalive as number | null) ?? null,
          route: e.route as boolean,
        })),
    })),
  };
}

/** One row a peer entry (a node without peers gets one row saying so): for a person. */
export function overlayRows(o: Overlay): Record<string, unknown>[] {
  return o.nodes.flatMap((n) => {
    const head = {
      node: n.name,
      site: n.site,
      address: n.address,
      role: n.hub ? 'hub' : n.dialable ? 'dialable' : 'behind nat',
    };
    if (n.peers.length === 0) return [{ ...head, peer: '(no peer: no interface)' }];
    return n.peers.map((p, i) => ({
      ...(i === 0 ? head : { node: '', site: '', address: '', role: '' }),
      peer: p.peer,
      endpoint: p.endpoint,
      allowed: p.allowedIps.join(',') + (p.route ? ' (route)' : ''),
      keepalive: p.keepalive,
    }));
  });
}

const q = (s: string) => `"${s.replace(/["\\]/g, '\\$&')}"`;

/**
 * Graphviz DOT (`mesh overlay show --dot | dot -Tsvg > overlay.svg`): one box
 * per site, hubs drawn double, one line per peered pair. A dashed line is
 * kept open by keepalives from a node behind NAT; a bold one carries the
 * spoke's whole range to its hub.
 */
export function overlayDot(o: Overlay): string {
  const lines = [
    'graph overlay {',
    `  label=${q(`overlay ${o.network}`)};`,
    '  node [shape=box, fontname="monospace"];',
  ];
  const sites = [...new Set(o.nodes.map((n) => n.site))].sort();
  sites.forEach((site, i) => {
    lines.push(`  subgraph cluster_${i} {`, `    label=${q(`site ${site}`)};`);
    for (const n of o.nodes.filter((x) => x.site === site)) {
      const label = `${n.name}\\n${n.address}${n.dialable ? `\\n${n.dialable}` : ''}`;
      lines.push(`    ${q(n.name)} [label="${label.replace(/"/g, '\\"')}"${n.hub ? ', peripheries=2' : ''}];`);
    }
    lines.push('  }');
  });
  const byName = new Map(o.nodes.map((n) => [n.name, n]));
  for (const n of o.nodes) {
    for (const p of n.peers) {
      if (p.peer < n.name) continue; // peering is symmetric: each pair drawn once, from its first name
      const back = byName.get(p.peer)?.peers.find((b) => b.peer === n.name);
      const style = [p.keepalive || back?.keepalive ? 'dashed' : '', p.route || back?.route ? 'bold' : '']
        .filter(Boolean)
        .join(',');
      lines.push(`  ${q(n.name)} -- ${q(p.peer)}${style ? ` [style=${q(style)}]` : ''};`);
    }
  }
  lines.push('}');
  return lines.join('\n');
}
