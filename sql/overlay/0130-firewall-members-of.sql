-- The firewall's members for the nodes named: composing a few nodes' firewalls
-- asks for their own members (their interface) alone, not every member's
-- address built and then all but a few dropped (0.69 s at 100,000 nodes).

/* firewall_members (0007) for NODE_NAMES only (null: every member), the one definition. */
create function overlay.firewall_members_of(node_names text[], with_dialled_by boolean)
returns table (node text, site text, address text, interface text, listen_port integer, dialled_by text[], ssh_port integer)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  with s as (select listen_port, interface from overlay.settings),
       f as (select ssh_port from overlay.firewall_setting),
       d as (select p.peer, array_agg(p.node order by p.node) as dialled_by from overlay.peers() p where with_dialled_by group by p.peer),
       m as (select * from overlay.member m where node_names is null
             union all select * from overlay.member m where m.name in (select unnest(node_names)))
  select m.name, m.site, host(m.address) || '/32', s.interface,
         case when m.dialable is not null then s.listen_port end,
         case when with_dialled_by then coalesce(d.dialled_by, '{}') end,
         f.ssh_port
    from m cross join s cross join f left join d on d.peer = m.name
$$;
revoke execute on function overlay.firewall_members_of(text[], boolean) from public;
grant execute on function overlay.firewall_members_of(text[], boolean) to mesh_assignment;
comment on function overlay.firewall_members_of(text[], boolean) is 'overlay.firewall_members for the nodes named (null: every member).';

create or replace function overlay.firewall_members(with_dialled_by boolean)
returns table (node text, site text, address text, interface text, listen_port integer, dialled_by text[], ssh_port integer)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  select * from overlay.firewall_members_of(null, with_dialled_by)
$$;
