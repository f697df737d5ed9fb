// `mesh firewall show NODE` and `mesh firewall ssh-port N`: what a node's
// firewall admits and why (X2), read from the view its declaration is
// composed from (assignment.firewall_opening), so the answer is the
// declaration's, not a second computation.
import { withStore } from '../store/with_store.js';
import { nodeName } from '../wire/names.js';
import { refuse } from '../sys/errors.js';

export interface Opening {
  proto: string;
  port: number;
  to: number | null;
  from: string[] | null;
  via: string | null;
  why: string;
  origin: string;
  reason: string;
  /** False when no source can be named yet: the rule is left out of the table. */
  inTable: boolean;
}

export interface FirewallShown {
  node: string;
  policy: 'drop';
  base: string[];
  openings: Opening[];
}

// What the host writes into every table itself (host/apply/firewall.ts).
const BASE = [
  'loopback',
  'answers to what the node began (established, related)',
  'the ICMP and ICMPv6 a network needs',
];

export async function firewallShow(node: string): Promise<FirewallShown> {
  nodeName(node);
  return withStore('assignment', async (sql) => {
    const [known] = await sql`select 1 from inventory.enrolled_node where name = ${node}`;
    if (!known) throw refuse('MSH18', `no enrolled node named ${node}`);
    // Addresses first, as declare does, so sources show the nodes the next declaration names.
    await sql`select overlay.allocate_addresses()`;
    const rows =
      await sql`select proto, port, port_to, sources, via, why, origin, reason from assignment.firewall_opening
                            where node = ${node} order by proto, port, why, sources::text`;
    return {
      node,
      policy: 'drop',
      base: BASE,
      openings: rows.map((r) => ({
        proto: r.proto as string,
        port: r.port as number,
        to: (r.port_to as number | null) ?? null,
        from: (r.sources as string[] | null) ?? null,
        via: (r.via as string | null) ?? null,
        why: r.why as string,
        origin: r.origin as string,
        reason: r.reason as string,
        inTable: r.sources === null || (r.sources as string[]).length > 0,
      })),
    };
  });
}

/** One row an opening, for a person. */
export function firewallRows(f: FirewallShown): Record<string, unknown>[] {
  return f.openings.map((o) => ({
    port: `${o.proto} ${o.port}${o.to && o.to !== o.port ? `-${o.to}` : ''}`,
    from: o.from === null ? 'anywhere' : o.from.length ? o.from.join(',') : '(nobody yet: not in the table)',
    via: o.via,
    origin: o.origin,
    why: o.reason,
  }));
}
