-- overlay: what-if and why read the hub groups (Q2, O4). The answers of 0060
-- chose a spoke's route hub by site and took any hub for everyone's peer,
-- which was the graph before hubs divided the fleet; the graph the
-- declarations carry is 0090's: each hub a group, each spoke in the group of
-- its address's /20 block modulo the number of hubs, peering with that hub
-- alone and routing the whole range through it; hubs peer with each other
-- and carry each other's blocks; spokes of one site peer directly when one of
-- them can be dialled. So, as WireGuard's routing by key makes of it:
--   - two members that are peers reach each other directly;
--   - otherwise each end that is a spoke sends through its group's hub, and
--     the hubs pass it on: spoke, its hub, the other's hub, the other spoke
--     (one hub when both are of one group; no hub at all, no path).
-- Every pair has a path while the overlay has a hub. A hub that fails
-- strands its group: each of its spokes keeps its direct peers (spokes of
-- its site) and reaches nothing else, and nothing reaches it, until the graph
-- is computed again without the hub, when the groups are counted over the
-- hubs left and every spoke has a hub again.
--
-- Where each member routes, now and once computed again without DOWN, is
-- read from overlay.member_groups, the grouping overlay.peers_of composes
-- from; the grouping itself is written once, in member_groups_without.

/* Each member's group (O4) as the graph would be computed with the nodes
   DOWN left out (null or empty: as it is): the hubs left are the groups, by
   name; a spoke belongs to the group of its address's /20 block modulo
   their number. block is that /20, as text for allowed IPs. */
create function overlay.member_groups_without(down text[]) returns table (name text, grp integer, groups integer, block text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  with s as (select network from overlay.settings),
       m as materialized (select * from overlay.member x where not (x.name = any(coalesce(down, '{}')))),
       n as (select count(*) filter (where hub) as hubs from m),
       g as (select greatest(1, n.hubs)::integer as groups from n)
  select m.name,
         case when m.hub
           then (row_number() over (partition by m.hub order by m.name) - 1)::integer
           else (((m.address - set_masklen(s.network::inet, 32)) >> 12) % g.groups)::integer
         end,
         g.groups,
         host(network(set_masklen(m.address, 20))) || '/20'
    from m cross join s cross join g
$$;
revoke execute on function overlay.member_groups_without(text[]) from public;
comment on function overlay.member_groups_without(text[]) is 'Each overlay member not in DOWN, its hub group as the graph would be computed without DOWN (O4), how many groups there would be, and its address''s /20 block.';

/* Each member's group (O4), as overlay.peers_of composes the graph. */
create or replace function overlay.member_groups() returns table (name text, grp integer, groups integer, block text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  select * from overlay.member_groups_without(null)
$$;

/* Every member that is not down, with what routing reads of it: its site,
   whether it can be dialled, whether it is a hub, its route hub now (its
   group's hub, as overlay.peers_of makes it) and the route hub it would have
   if the graph were computed again without the nodes DOWN (its group's hub
   among the hubs left; null: no hub left). Both null for a hub.
   Security definer: assignment's answers read it and hold none of our tables. */
create or replace function overlay.route_members(down text[])
returns table (node text, site text, dialable boolean, hub boolean, route_now text, route_after text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  with m as materialized (select * from overlay.member),
       gn as materialized (select * from overlay.member_groups()),
       ga as materialized (select * from overlay.member_groups_without(down)),
       -- Each group's hub, now and once computed again.
       hn as (select g.grp, g.name from gn g join m on m.name = g.name where m.hub),
       ha as (select g.grp, g.name from ga g join m on m.name = g.name where m.hub)
  select a.name, a.site, a.dialable is not null, a.hub, hn.name, ha.name
    from m a
    join gn on gn.name = a.name
    join ga on ga.name = a.name -- ga holds no node in DOWN
    left join hn on not a.hub and hn.grp = gn.grp
    left join ha on not a.hub and ha.grp = ga.grp
$$;

/* Whether two members are peers in the graph (O1, O4), from what
   route_members says of each (its name, hub, route hub, site, dialable): two
   hubs; a spoke and its route hub; or two spokes of one site, one of them
   dialable. The pairs overlay.peers_of lists, as one predicate. The
   six-argument overlay.peered of 0060 stays (assignment's 0060, which a new
   store builds after every overlay migration, names it), and nothing reads it. */
create function overlay.peered(a text, a_hub boolean, a_route text, a_site text, a_dialable boolean,
                               b text, b_hub boolean, b_route text, b_site text, b_dialable boolean)
returns boolean language sql immutable parallel safe as $$
  select (a_hub and b_hub) or a_route is not distinct from b or b_route is not distinct from a
      or (not a_hub and not b_hub and a_site = b_site and (a_dialable or b_dialable))
$$;
comment on function overlay.peered(text, boolean, text, text, boolean, text, boolean, text, text, boolean) is 'True when two members are peers: two hubs, a spoke and its route hub, or two spokes of one site with one end dialable (O1, O4). Each end as overlay.route_members gives it.';

/* The spokes a failure strands: every member not in DOWN whose route hub is
   in DOWN. It keeps its direct peers (the spokes of its site it peers with)
   and reaches nothing else until the graph is computed again; carried_by is
   the hub it would route through then (null: no hub is left to carry it).
   lost counts the members it reaches now and would not: every member not
   down but itself, less its direct peers. */
create or replace function overlay.strand_spokes(down text[])
returns table (node text, site text, hub text, carried_by text, lost bigint)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  with r as materialized (select * from overlay.route_members(down)),
       s as materialized (select * from r where r.route_now = any(coalesce(down, '{}'))),
       -- Per site: its spokes not down, and how many of those can be dialled.
       g as (select r.site, count(*) as n, count(*) filter (where r.dialable) as d from r where not r.hub group by r.site),
       t as (select count(*) as n from r)
  select s.node, s.site, s.route_now, s.route_after,
         t.n - 1 - case when s.dialable then g.n - 1 else g.d end
    from s
    join g on g.site = s.site
    cross join t
$$;

/* How many ordered pairs lose_paths lists, without making one: from each
   stranded spoke, every member it stops reaching (strand_spokes' lost); to
   it, the same members but those stranded too (counted from their own end
   already). */
create function overlay.count_lost_paths(down text[]) returns bigint
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off as $$
  with s as materialized (select x.*, r.dialable from overlay.strand_spokes(down) x join overlay.route_members(down) r on r.node = x.node),
       t as (select count(*) as n from s),
       -- Per site: the stranded spokes there, and how many of those can be dialled.
       g as (select s.site, count(*) as n, count(*) filter (where s.dialable) as d from s group by s.site)
  select coalesce(sum(2 * s.lost - (t.n - 1 - case when s.dialable then g.n - 1 else g.d end)), 0)::bigint
    from s
    join g on g.site = s.site
    cross join t
$$;
revoke execute on function overlay.count_lost_paths(text[]) from public;
grant execute on function overlay.count_lost_paths(text[]) to mesh_assignment, mesh_overlay_reader, mesh_assignment_reader;
comment on function overlay.count_lost_paths(text[]) is 'How many ordered pairs of members not in DOWN lose every path when DOWN fails: as many rows as overlay.lose_paths gives with no limit, counted without making them (Q2).';

/* The ordered pairs (node reaches peer) of members not in DOWN that have a
   path now and lose every path with DOWN gone: one end or both stranded
   (overlay.strand_spokes), and the two not peers. hub is the hub lost (the
   node's when it is stranded, else the peer's); carried_by the hub that
   would carry that end once the graph is computed again without DOWN (null:
   none would). In order of node, then peer; at most MAX_PAIRS (null: all).
   A stranded spoke loses nearly every member, so the whole answer grows as
   the stranded spokes times the fleet (10^8 rows at 10,000 nodes): the
   pairs are made node by node in order, so the first MAX_PAIRS cost only
   themselves, and count_lost_paths counts them without making one. */
create or replace function overlay.lose_paths(down text[], max_pairs integer default null)
returns table (node text, peer text, hub text, carried_by text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  with r as materialized (select r.*, coalesce(r.route_now = any(coalesce(down, '{}')), false) as stranded
                            from overlay.route_members(down) r)
  select a.node, b.node,
         case when a.stranded then a.route_now else b.route_now end,
         case when a.stranded then a.route_after else b.route_after end
    from (select * from r order by r.node) a
    cross join lateral (
      select * from r b
       where b.node <> a.node and (a.stranded or b.stranded)
         and not overlay.peered(a.node, a.hub, a.route_now, a.site, a.dialable, b.node, b.hub, b.route_now, b.site, b.dialable)
       order by b.node) b
   limit max_pairs
$$;
comment on function overlay.lose_paths(text[], integer) is 'Ordered pairs of members not in DOWN that lose every path when DOWN fails (one end or both stranded, not peers), in order, at most MAX_PAIRS (null: all): the hub lost and the hub that would carry that end once the graph is computed again (null: none) (Q2).';
comment on function overlay.peered(boolean, text, boolean, boolean, text, boolean) is 'The edge rule of a single hub (a hub a peer of every member), which is not the graph''s with two hubs or more; nothing reads it. The graph''s rule is overlay.peered(a, a_hub, a_route, a_site, a_dialable, b, ...) (O4).';
