/*
 * The nodes whose peer lists are long, and about how long: a hub holds its
 * group (the members over the hubs, O4), a dialable node its site. Composing
 * such a node costs about as much as composing that many others, so a fleet
 * composed in parts (`declare --all`, `plan --all`) is split by this weight,
 * not by count: two hubs and a hundred dialable nodes in one contiguous range
 * of names kept that part a fifth longer than the other at 100,000 nodes.
 */
create function overlay.long_peer_lists() returns table (node text, peers bigint)
language sql stable security definer set search_path = pg_catalog, pg_temp as $$
  -- From the enrolled nodes, not overlay.member: the weight needs no address, and the join to
  -- every address cost more than the split saves.
  with e as materialized (select name, site, dialable is not null as dialable from inventory.enrolled_node),
       h as (select h.node from overlay.hub h join e on e.name = h.node and e.dialable),
       n as (select (select count(*) from e) as members, (select count(*) from h) as hubs),
       s as (select site, count(*) as members from e group by site)
  select e.name, case when e.name in (select node from h) then n.members / greatest(n.hubs, 1) else s.members end
    from e cross join n join s on s.site is not distinct from e.site
   where e.dialable
$$;
revoke execute on function overlay.long_peer_lists() from public;
grant execute on function overlay.long_peer_lists() to mesh_assignment;
comment on function overlay.long_peer_lists() is 'Hubs and dialable nodes with about how many peers each holds (a hub its group, a dialable node its site): the weight a composition in parts is split by.';
