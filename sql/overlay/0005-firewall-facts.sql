-- overlay: what the firewall needs to know of the overlay (X2). The firewall
-- itself is composed in assignment (sql/assignment/0007), the one context
-- that sees modules, placements and provisions as well; this context answers
-- for its own facts: who is in the overlay, on which address and interface,
-- who listens for WireGuard and which peers dial it, and the ssh port every
-- node keeps open.

create table overlay.firewall_setting (
  one      boolean primary key default true check (one),
  ssh_port integer not null default 22 check (ssh_port between 1 and 65535)
);
comment on table overlay.firewall_setting is 'Firewall facts of this mesh: one row.';
comment on column overlay.firewall_setting.one is 'Always true: there is one row.';
comment on column overlay.firewall_setting.ssh_port is 'The ssh port every node''s firewall keeps open, so an operator over ssh is never locked out (X1). The first-node bundle sets it from --ssh-port.';
insert into overlay.firewall_setting default values;

/* The ssh port every firewall keeps open. Returns it. */
create function overlay.set_ssh_port(port integer) returns integer language plpgsql as $$
begin
  if port is null or port not between 1 and 65535 then
    raise exception 'ssh port % is not a port number', port using errcode = 'MSH65', hint = 'give a port from 1 to 65535';
  end if;
  update overlay.firewall_setting set ssh_port = port;
  return port;
end $$;

/* Each overlay member as the firewall sees it: its address (/32), the
   interface overlay traffic arrives on, the UDP port it listens on when it is
   dialable (null otherwise: a node behind NAT dials out and hears answers),
   and the peers whose lists name it (they are who dial that port). Security
   definer: assignment reads it and holds none of our tables. */
create function overlay.firewall_members()
returns table (node text, site text, address text, interface text, listen_port integer, dialled_by text[], ssh_port integer)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  with s as (select listen_port, interface from overlay.settings),
       f as (select ssh_port from overlay.firewall_setting),
       p as materialized (select node, peer from overlay.peers())
  select m.name, m.site, host(m.address) || '/32', s.interface,
         case when m.dialable is not null then s.listen_port end,
         coalesce((select array_agg(p.node order by p.node) from p where p.peer = m.name), '{}'),
         f.ssh_port
    from overlay.member m cross join s cross join f
$$;
revoke execute on function overlay.firewall_members() from public;
grant execute on function overlay.firewall_members() to mesh_assignment;

/* The ssh port, for nodes not (yet) in the overlay. */
create function overlay.ssh_port() returns integer language sql stable security definer set search_path = pg_catalog, pg_temp as $$
  select ssh_port from overlay.firewall_setting
$$;
revoke execute on function overlay.ssh_port() from public;
grant execute on function overlay.ssh_port() to mesh_assignment;
