-- Composing a few spokes reads a few members. The peer graph's rule (0090)
-- ran over every member of the overlay to list a hundred nodes' peers: each
-- member's group, its address and key (0.58 s at 100,000 nodes for 100
-- spokes). A spoke's group is its own address's block modulo the number of
-- hubs, and its peers are hubs and members of its own site: for a few spokes,
-- the rule now runs over those members alone. A hub peers with its whole
-- group, so a hub asked for still reads every member.

/* Each member (overlay.member) of NODE_NAMES (null: every member) not in
   DOWN, with its hub group as the graph is computed without DOWN (O4): the
   hubs left are the groups, by name, counted over all of them whoever is
   asked for; a spoke belongs to the group of its address's /20 block modulo
   their number. block is that /20, as text for allowed IPs. The one
   definition of the grouping. */
create function overlay.members_grouped(node_names text[], down text[])
returns table (name text, site text, dialable text, public_key text, address inet, hub boolean, grp integer, groups integer, block text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  with s as (select network from overlay.settings),
       h as materialized (
         select x.name, (row_number() over (order by x.name) - 1)::integer as grp
           from overlay.member x
          where x.name in (select node from overlay.hub) and x.hub and not (x.name = any(coalesce(down, '{}')))),
       g as (select greatest(1, count(*))::integer as groups from h),
       -- Two branches, not one with an OR: the OR kept the planner from looking names up.
       m as materialized (
         select * from (select * from overlay.member x where node_names is null
                        union all select * from overlay.member x where x.name in (select unnest(node_names))) x
          where not (x.name = any(coalesce(down, '{}'))))
  select m.name, m.site, m.dialable, m.public_key, m.address, m.hub,
         case when m.hub then hh.grp
           else (((m.address - set_masklen(s.network::inet, 32)) >> 12) % g.groups)::integer
         end,
         g.groups,
         host(network(set_masklen(m.address, 20))) || '/20'
    from m cross join s cross join g left join h hh on hh.name = m.name
$$;
revoke execute on function overlay.members_grouped(text[], text[]) from public;
comment on function overlay.members_grouped(text[], text[]) is 'Each overlay member named (null: every member) not in DOWN, with its hub group as the graph would be computed without DOWN (O4), how many groups there would be, and its address''s /20 block.';

/* member_groups_without (0120) from the one definition. */
create or replace function overlay.member_groups_without(down text[]) returns table (name text, grp integer, groups integer, block text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  select name, grp, groups, block from overlay.members_grouped(null, down)
$$;

/* peers_of as in 0090, over the members that can be peers of the nodes asked for. */
create or replace function overlay.peers_of(node_names text[]) returns table (node text, peer text, public_key text, endpoint text, allowed_ips text[], keepalive integer, route boolean, reason text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 200 as $$
  with s as (select network, keepalive from overlay.settings),
       -- Who can be a peer of the nodes asked for (O1, O4). A spoke's peers are its group's hub,
       -- its site's dialable nodes, and, if it is dialable, its whole site: for a few spokes,
       -- those members alone are read (the pairs below are the same rule over fewer rows). For
       -- a hub, for many, or for all: every member.
       few as (select node_names is not null and cardinality(node_names) <= 1000
                      and not exists (select 1 from overlay.hub h where h.node = any(node_names)) as yes),
       asked as materialized (
         select e.name, e.site, e.dialable from inventory.enrolled_node e, few
          where few.yes and e.name in (select unnest(node_names))),
       -- The sites' dialable nodes through inventory's index of them; a whole site only for a
       -- dialable spoke asked for (rare: then its site is read).
       reach as (
         select name from asked
         union select h.node from overlay.hub h
         union select e.name from inventory.enrolled_node e
                where e.dialable is not null and e.site in (select site from asked)
         union select e.name from inventory.enrolled_node e
                where exists (select 1 from asked where dialable is not null)
                  and e.site in (select site from asked where dialable is not null)),
       m as materialized (select * from overlay.members_grouped(
                            case when (select yes from few) then array(select name from reach) end, null)),
       h as materialized (select * from m where hub),
       d as materialized (select * from m where dialable is not null and not hub),
       -- The nodes whose lists are wanted; a semi-join, not = any() (10,000 × 10,000 comparisons).
       w as materialized (select * from m where node_names is null or m.name in (select unnest(node_names))),
       blocks as (select x.grp, array_agg(distinct x.block order by x.block) as blocks from m x where not x.hub group by x.grp),
       pair as (
         select a.name as a, b.name as b from w a join h b on b.name <> a.name and (a.hub or b.grp = a.grp)
         union
         select a.name, b.name from w a join m b on a.hub and b.name <> a.name and (b.hub or b.grp = a.grp)
         union
         select a.name, b.name from w a join d b on not a.hub and b.site = a.site and b.name <> a.name
         union
         select a.name, b.name from w a join m b on not a.hub and not b.hub and a.dialable is not null and b.site = a.site and b.name <> a.name),
       route as (
         select a.name as node, h.name as hub from w a join h on h.grp = a.grp where not a.hub)
  select a.name, b.name, b.public_key, b.dialable,
         case when r.hub is not null then array[s.network::text]
              when a.hub and b.hub then array[host(b.address) || '/32'] || coalesce(bl.blocks, '{}')
              else array[host(b.address) || '/32'] end,
         case when a.dialable is null then s.keepalive end,
         r.hub is not null,
         case when a.hub or b.hub then 'hub' else 'site' end
    from pair p
    join m a on a.name = p.a
    join m b on b.name = p.b
    cross join s
    left join route r on r.node = p.a and r.hub = p.b
    left join blocks bl on a.hub and b.hub and bl.grp = b.grp
$$;
