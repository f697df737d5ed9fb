-- The peer graph and the interfaces for some nodes only. Why: `mesh declare`
-- composes 10,000 nodes in parts on several connections at once (one snapshot,
-- src/assignment/compose_parts.ts), and every part read the whole graph
-- through overlay.node_resources: the interfaces were most of a part's work
-- (0.6 s of 1.4 s at bench 3's fleet) however small the part. The same rules
-- and bytes as 0003 and 0002: only the list-holding side of each pair is
-- filtered, so each named node's peer list is exactly the full graph's.

/* overlay.peers (0003) for the nodes named (null: every node): the rows whose
   node is one of them. */
create function overlay.peers_of(node_names text[]) returns table (node text, peer text, public_key text, endpoint text, allowed_ips text[], keepalive integer, route boolean, reason text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 200 as $$
  with s as (select network, keepalive from overlay.settings),
       m as materialized (select * from overlay.member),
       h as materialized (select * from m where hub),
       d as materialized (select * from m where dialable is not null),
       -- The nodes whose lists are wanted; a semi-join, not = any() (10,000 × 10,000 comparisons).
       w as materialized (select * from m where node_names is null or m.name in (select unnest(node_names))),
       pair as (
         select a.name as a, b.name as b from w a join h b on b.name <> a.name
         union
         select a.name, b.name from w a join m b on a.hub and b.name <> a.name
         union
         select a.name, b.name from w a join d b on b.site = a.site and b.name <> a.name
         union
         select a.name, b.name from w a join m b on a.dialable is not null and b.site = a.site and b.name <> a.name),
       route as (
         select distinct on (a.name) a.name as node, h.name as hub
           from w a join h on h.name <> a.name
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
revoke execute on function overlay.peers_of(text[]) from public;
grant execute on function overlay.peers_of(text[]) to mesh_assignment;
comment on function overlay.peers_of(text[]) is 'overlay.peers for the nodes named (null: all): each one''s peer list exactly as in the whole graph.';

-- The one definition of the graph: the form without an argument is all of it.
create or replace function overlay.peers() returns table (node text, peer text, public_key text, endpoint text, allowed_ips text[], keepalive integer, route boolean, reason text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 200 as $$
  select * from overlay.peers_of(null)
$$;

/* overlay.interfaces (0002) for the nodes named (null: every node). */
create function overlay.interfaces_of(node_names text[]) returns table (node text, resource jsonb)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  with s as (select network, listen_port, interface from overlay.settings),
       p as (select * from overlay.peers_of(node_names))
  select m.name,
         jsonb_strip_nulls(jsonb_build_object(
           'id', 'wireguard:' || s.interface,
           'kind', 'wireguard',
           'name', s.interface,
           'address', host(m.address) || '/' || masklen(s.network),
           'listenPort', case when m.dialable is not null then s.listen_port end,
           'hub', m.hub,
           'peers', jsonb_agg(jsonb_build_object('publicKey', p.public_key, 'endpoint', p.endpoint,
                                                 'allowedIps', to_jsonb(p.allowed_ips), 'keepalive', p.keepalive)
                              order by p.public_key)))
    from overlay.member m
    cross join s
    join p on p.node = m.name
   group by m.name, m.address, m.dialable, m.hub, s.network, s.listen_port, s.interface
$$;
revoke execute on function overlay.interfaces_of(text[]) from public;
grant execute on function overlay.interfaces_of(text[]) to mesh_assignment;
comment on function overlay.interfaces_of(text[]) is 'overlay.interfaces for the nodes named (null: all).';

create or replace function overlay.interfaces() returns table (node text, resource jsonb)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  select * from overlay.interfaces_of(null)
$$;

/* What this context adds to the nodes named: the view's rows, for those only. */
create function overlay.node_resources_of(node_names text[]) returns table (node text, resource jsonb)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  select * from overlay.interfaces_of(node_names)
$$;
revoke execute on function overlay.node_resources_of(text[]) from public;
grant execute on function overlay.node_resources_of(text[]) to mesh_assignment;
comment on function overlay.node_resources_of(text[]) is 'overlay.node_resources for the nodes named (null: all): what composing a part of the fleet reads.';

create or replace view overlay.node_resources as select node, resource from overlay.node_resources_of(null);
