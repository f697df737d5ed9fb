-- overlay.firewall_members as in 0006, with the choice of leaving out
-- dialled_by. Why: dialled_by needs the whole peer graph (overlay.peers()),
-- and only the reason text of `mesh firewall show` reads it, never a rule;
-- every composition computed the graph for the interfaces and a second time
-- here (0.3-0.5 s of composing 10,000 nodes, bench 3). Composing asks
-- without it; the firewall's reasons ask with it.

/* Each overlay member as the firewall sees it (as in 0005), dialled_by null
   unless WITH_DIALLED_BY: then the graph is not computed at all (the filter
   on the argument is evaluated once, before the peers are read). */
create function overlay.firewall_members(with_dialled_by boolean)
returns table (node text, site text, address text, interface text, listen_port integer, dialled_by text[], ssh_port integer)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  with s as (select listen_port, interface from overlay.settings),
       f as (select ssh_port from overlay.firewall_setting),
       d as (select p.peer, array_agg(p.node order by p.node) as dialled_by from overlay.peers() p where with_dialled_by group by p.peer)
  select m.name, m.site, host(m.address) || '/32', s.interface,
         case when m.dialable is not null then s.listen_port end,
         case when with_dialled_by then coalesce(d.dialled_by, '{}') end,
         f.ssh_port
    from overlay.member m cross join s cross join f left join d on d.peer = m.name
$$;
revoke execute on function overlay.firewall_members(boolean) from public;
grant execute on function overlay.firewall_members(boolean) to mesh_assignment;
comment on function overlay.firewall_members(boolean) is 'Each overlay member for the firewall: address, interface, WireGuard port when dialable, the ssh port, and (only when asked: it computes the peer graph) the peers that dial it.';

-- The one definition: the form without an argument is the full answer.
create or replace function overlay.firewall_members()
returns table (node text, site text, address text, interface text, listen_port integer, dialled_by text[], ssh_port integer)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  select * from overlay.firewall_members(true)
$$;
