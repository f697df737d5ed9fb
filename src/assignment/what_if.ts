// `mesh overlay what-if --down HUB[,NODE...]`: what the graph the
// declarations carry loses if those nodes fail (Q2): the spokes stranded,
// the pairs that lose every path, the openings over the overlay that become
// unreachable, and which hub would carry each once the graph is computed
// again without them. The rules are SQL (overlay.strand_spokes,
// overlay.lose_paths, overlay.count_lost_paths, assignment.lose_openings);
// this only reads them.
import { withStore } from '../store/with_store.js';
import { nodeName } from '../wire/names.js';
import type { Sql } from '../store/connect.js';

export interface Stranded {
  node: string;
  site: string;
  hub: string;
  carriedBy: string | null;
  lost: number;
}
export interface LostPair {
  node: string;
  peer: string;
  hub: string;
  carriedBy: string | null;
}
export interface LostOpening {
  node: string;
  proto: string;
  port: number;
  portTo: number | null;
  why: string;
  origin: string;
  fromNode: string;
  lostHub: string | null;
  carriedBy: string | null;
}
export interface WhatIf {
  down: string[];
  stranded: Stranded[];
  /** Ordered pairs (node reaches peer) that lose every path; all of them, or the first `limit`. */
  pairs: LostPair[];
  pairsTotal: number;
  openings: LostOpening[];
  /** True when every lost pair would be carried by another hub once the graph is computed again. */
  carried: boolean;
}

export async function overlayWhatIf(down: string[], limit: number | null): Promise<WhatIf> {
  for (const n of down) nodeName(n);
  return withStore('assignment', (sql) => readWhatIf(sql, down, limit));
}

/** The answer on a store already open (the console reads it as assignment's reader). */
export async function readWhatIf(sql: Sql, down: string[], limit: number | null): Promise<WhatIf> {
  await sql`select overlay.check_members(names => ${down}::text[])`;
  const stranded =
    await sql`select node, site, hub, carried_by, lost from overlay.strand_spokes(down => ${down}::text[])
                               order by node`;
  // In the function's own order (node, then peer): at most LIMIT made, however many are lost.
  const pairs = await sql`select node, peer, hub, carried_by
                            from overlay.lose_paths(down => ${down}::text[], max_pairs => ${limit}::integer)`;
  const [total] = await sql`select overlay.count_lost_paths(down => ${down}::text[]) as n`;
  const openings = await sql`select node, proto, port, port_to, why, origin, from_node, lost_hub, carried_by
                               from assignment.lose_openings(down => ${down}::text[])
                              order by node, proto, port, from_node`;
  const pairsTotal = Number(total!.n);
  return {
    down,
    stranded: stranded.map((r) => ({
      node: r.node as string,
      site: r.site as string,
      hub: r.hub as string,
      carriedBy: (r.carried_by as string | null) ?? null,
      lost: Number(r.lost),
    })),
    pairs: pairs.map((r) => ({
      node: r.node as string,
      peer: r.peer as string,
      hub: r.hub as string,
      carriedBy: (r.carried_by as string | null) ?? null,
    })),
    pairsTotal,
    openings: openings.map((r) => ({
      node: r.node as string,
      proto: r.proto as string,
      port: r.port as number,
      portTo: (r.port_to as number | null) ?? null,
      why: r.why as string,
      origin: r.origin as string,
      fromNode: r.from_node as string,
      lostHub: (r.lost_hub as string | null) ?? null,
      carriedBy: (r.carried_by as string | null) ?? null,
    })),
    carried: stranded.every((r) => r.carried_by !== null),
  };
}
