-- overlay.peers joined every member with every other and filtered the pairs:
-- N² comparisons however few edges the graph has (10,000 nodes, 10^8 pairs,
-- in every compose). Here each rule is its own join, sized by its output:
-- every node × the hubs, and at each site every node × its dialable ones.
-- Same rules as 0002 (O1); the graph tests hold it to them.
create or replace function overlay.peers() returns table (node text, peer text, public_key text, endpoint text, allowed_ips text[], keepalive integer, route boolean, reason text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 200 as $$
  with s as (select network, keepalive from overlay.settings),
       m as materialized (select * from overlay.member),
       h as materialized (select * from m where hub),
       d as materialized (select * from m where dialable is not null),
       pair as (
         select a.name as a, b.name as b from m a join h b on b.name <> a.name
         union
         select a.name, b.name from h a join m b on b.name <> a.name
         union
         select a.name, b.name from m a join d b on b.site = a.site and b.name <> a.name
         union
         select a.name, b.name from d a join m b on b.site = a.site and b.name <> a.name),
       route as (
         select distinct on (a.name) a.name as node, h.name as hub
           from m a join h on h.name <> a.name
          where not a.hub
          order by a.name, (h.site = a.site) desc, h.name)
  select a.name, b.name, b.public_key, b.dialable,
         case when r.hub is not null then array[s.network::text] else array[host(b.address) || '/32'] end,
         case when a.dialable is null then s.keepalive end,
         r.hub is not null,
         case when a.hub or b.hub then 'hub' else 'site' end
    from pair p
    join m a on a.name = p.a
    join m b on b.name = p.b
    cross join s
    left join route r on r.node = p.a and r.hub = p.b
$$;
