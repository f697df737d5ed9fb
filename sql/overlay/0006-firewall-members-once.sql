-- overlay.firewall_members as in 0005, with each member's dialled_by
-- gathered in one pass over the peer list (group by) rather than a scan of
-- the whole list per member: at 10,000 nodes the scan was 44 s of every
-- composition (bench 3), the group by is well under one.
create or replace function overlay.firewall_members()
returns table (node text, site text, address text, interface text, listen_port integer, dialled_by text[], ssh_port integer)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  with s as (select listen_port, interface from overlay.settings),
       f as (select ssh_port from overlay.firewall_setting),
       d as (select p.peer, array_agg(p.node order by p.node) as dialled_by from overlay.peers() p group by p.peer)
  select m.name, m.site, host(m.address) || '/32', s.interface,
         case when m.dialable is not null then s.listen_port end,
         coalesce(d.dialled_by, '{}'),
         f.ssh_port
    from overlay.member m cross join s cross join f left join d on d.peer = m.name
$$;
