-- overlay: what the graph the declarations carry says about paths (Q2). A
-- path between two members is what WireGuard's routing by key makes of the
-- peer lists overlay.peers_of writes, nothing more:
--   - two members that are peers reach each other directly (one of them a
--     hub, or one site with a dialable end: the rules of the graph, O1);
--   - otherwise a spoke sends to its route hub (the peer carrying the whole
--     range), and the hub sends on to the other end; the other end accepts a
--     packet from that hub with the first end's address only if that hub
--     carries the whole range for it too, i.e. is its route hub as well.
--     Two spokes with different route hubs and no edge have no path.
-- Nothing else forwards: a spoke whose route hub is down keeps only its
-- direct peers until the graph is computed again without that hub.

-- The console asks as assignment's reader (the overlay page's questions), so
-- that role may use this schema and run these functions, nothing more.
grant usage on schema overlay to mesh_assignment_reader;

/* Every member that is not down, with what routing reads of it: its site,
   whether it can be dialled, whether it is a hub, its route hub now (as
   overlay.peers_of chooses it: its own site's first hub, then by name) and
   the route hub it would have if the graph were computed again without the
   nodes DOWN (the same choice among the hubs left; null: no hub left).
   Security definer: assignment's answers read it and hold none of our tables. */
create function overlay.route_members(down text[])
returns table (node text, site text, dialable boolean, hub boolean, route_now text, route_after text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  with m as materialized (select * from overlay.member),
       h as materialized (select m.name, m.site, m.name = any(coalesce(down, '{}')) as down from m where m.hub)
  select a.name, a.site, a.dialable is not null, a.hub,
         case when not a.hub then
           (select h.name from h where h.name <> a.name order by (h.site = a.site) desc, h.name limit 1) end,
         case when not a.hub then
           (select h.name from h where h.name <> a.name and not h.down order by (h.site = a.site) desc, h.name limit 1) end
    from m a
   where not (a.name = any(coalesce(down, '{}')))
$$;
revoke execute on function overlay.route_members(text[]) from public;
grant execute on function overlay.route_members(text[]) to mesh_assignment, mesh_overlay_reader, mesh_assignment_reader;
comment on function overlay.route_members(text[]) is 'Each member not in DOWN: site, dialable, hub, its route hub now and the one it would have with the graph computed again without DOWN (null: no hub left). What what-if and why read of the graph (Q2).';

/* Whether two members are peers in the graph (O1): one is a hub, or both
   are at one site and one of them can be dialled. The one statement of the
   edge rule the answers below share with overlay.peers_of. */
create function overlay.peered(a_hub boolean, a_site text, a_dialable boolean, b_hub boolean, b_site text, b_dialable boolean)
returns boolean language sql immutable parallel safe as $$
  select a_hub or b_hub or (a_site = b_site and (a_dialable or b_dialable))
$$;
comment on function overlay.peered(boolean, text, boolean, boolean, text, boolean) is 'True when two members are peers: one is a hub, or one site and one of them dialable (O1).';

/* The spokes a failure strands: every member not in DOWN whose route hub is
   in DOWN. It keeps its direct peers and reaches nothing else until the
   graph is computed again; carried_by is the hub it would route through
   then (null: no hub is left to carry it). lost counts the members it
   reaches now and would not: the other spokes of the same route hub that
   are not its peers. */
create function overlay.strand_spokes(down text[])
returns table (node text, site text, hub text, carried_by text, lost bigint)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  with r as materialized (select * from overlay.route_members(down)),
       s as materialized (select * from r where r.route_now = any(coalesce(down, '{}'))),
       -- Per lost hub and site: how many of its stranded spokes there, and how many of those can be dialled.
       g as (select s.route_now, s.site, count(*) as n, count(*) filter (where s.dialable) as d from s group by s.route_now, s.site),
       t as (select s.route_now, count(*) as n from s group by s.route_now)
  select s.node, s.site, s.route_now, s.route_after,
         -- The others of its group, less its peers among them (one site, one end dialable).
         t.n - 1 - case when s.dialable then g.n - 1 else g.d end
    from s
    join g on g.route_now = s.route_now and g.site = s.site
    join t on t.route_now = s.route_now
$$;
revoke execute on function overlay.strand_spokes(text[]) from public;
grant execute on function overlay.strand_spokes(text[]) to mesh_assignment, mesh_overlay_reader, mesh_assignment_reader;
comment on function overlay.strand_spokes(text[]) is 'The spokes whose route hub is in DOWN: the hub lost, the hub that would carry them once the graph is computed again (null: none), and how many members each stops reaching (Q2).';

/* The ordered pairs (node reaches peer) of members not in DOWN that have a
   path now and lose every path with DOWN gone: both ends route through the
   same hub in DOWN and are not peers. carried_by is the hub that would carry
   the pair once the graph is computed again without DOWN: both ends' new
   route hub, when it is one and the same; null when none would. In order of
   node, then peer; at most MAX_PAIRS (null: all). A hub's spokes lose each
   other two by two, so the whole answer grows as the square of a site's
   spokes (10^8 rows at 10,000 nodes): the pairs are made node by node in
   order, so the first MAX_PAIRS cost only themselves, and strand_spokes
   gives the counts without making a pair. */
create function overlay.lose_paths(down text[], max_pairs integer default null)
returns table (node text, peer text, hub text, carried_by text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  with s as materialized (select * from overlay.route_members(down) r where r.route_now = any(coalesce(down, '{}')))
  select a.node, b.node, a.route_now,
         case when a.route_after = b.route_after then a.route_after end
    from (select * from s order by s.node) a
    cross join lateral (
      select * from s b
       where b.route_now = a.route_now and b.node <> a.node
         and not overlay.peered(a.hub, a.site, a.dialable, b.hub, b.site, b.dialable)
       order by b.node) b
   limit max_pairs
$$;
revoke execute on function overlay.lose_paths(text[], integer) from public;
grant execute on function overlay.lose_paths(text[], integer) to mesh_assignment, mesh_overlay_reader, mesh_assignment_reader;
comment on function overlay.lose_paths(text[], integer) is 'Ordered pairs of members not in DOWN that lose every path when DOWN fails, in order, at most MAX_PAIRS (null: all): the hub they lose and the hub that would carry them once the graph is computed again (null: none) (Q2).';

/* The names a question is asked about, checked: each must be an overlay
   member (enrolled, with an address), or the answer would silently leave it
   out. Returns the names. */
create function overlay.check_members(names text[]) returns text[]
language plpgsql stable security definer set search_path = pg_catalog, pg_temp as $$
declare missing text;
begin
  if names is null or cardinality(names) = 0 then
    raise exception 'no node named' using errcode = 'MSHY0', hint = 'name at least one node, e.g. --down hub1';
  end if;
  select string_agg(x, ', ' order by x) into missing
    from unnest(names) x where not exists (select 1 from overlay.member m where m.name = x);
  if missing is not null then
    raise exception 'not in the overlay: %', missing using errcode = 'MSHY1',
      hint = 'name nodes the overlay holds (mesh overlay show): a node joins it once enrolled and given an address by mesh declare';
  end if;
  return names;
end $$;
revoke execute on function overlay.check_members(text[]) from public;
grant execute on function overlay.check_members(text[]) to mesh_assignment, mesh_overlay_reader, mesh_assignment_reader;
comment on function overlay.check_members(text[]) is 'NAMES, when each is an overlay member; refuses none named (MSHY0) and names the overlay does not hold (MSHY1).';
