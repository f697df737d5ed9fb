-- overlay: the ports of a broker cluster's Erlang traffic (issue 19, X2).
-- Broker nodes find each other through epmd and then talk over the Erlang
-- distribution port; both are the same on every broker node (epmd's port
-- must be: a node asks the other's epmd on its own), set by the bundle from
-- its --epmd-port and --dist-port. Here beside the ssh port, the other
-- mesh-wide fact the firewall reads; assignment 0021 admits both on every
-- broker node from the other broker nodes' overlay addresses alone.

alter table overlay.firewall_setting
  add column epmd_port integer not null default 4373 check (epmd_port between 1 and 65535),
  add column dist_port integer not null default 25673 check (dist_port between 1 and 65535);
comment on column overlay.firewall_setting.epmd_port is 'The port epmd listens on, on every broker node''s overlay address (the bundle''s --epmd-port; 4373, not 4369, so it never meets a distribution''s own epmd). Admitted from the other broker nodes alone.';
comment on column overlay.firewall_setting.dist_port is 'The Erlang distribution port of every broker node (the bundle''s --dist-port), on its overlay address. Admitted from the other broker nodes alone.';

/* The epmd and distribution ports of the broker cluster. Returns them. */
create function overlay.set_broker_ports(epmd integer, dist integer) returns table (epmd_port integer, dist_port integer) language plpgsql as $$
begin
  if epmd is null or dist is null or epmd not between 1 and 65535 or dist not between 1 and 65535 or epmd = dist then
    raise exception 'broker ports epmd % and distribution % are not two port numbers', epmd, dist using errcode = 'MSH66',
      hint = 'give two different ports from 1 to 65535 (install.sh --epmd-port, --dist-port)';
  end if;
  update overlay.firewall_setting f set epmd_port = epmd, dist_port = dist;
  return query select f.epmd_port, f.dist_port from overlay.firewall_setting f;
end $$;
comment on function overlay.set_broker_ports(integer, integer) is 'Set the broker cluster''s epmd and distribution ports (X2). Refuses anything but two different ports from 1 to 65535 (MSH66).';

/* For assignment, which holds none of our tables. */
create function overlay.broker_ports() returns table (epmd_port integer, dist_port integer)
language sql stable security definer set search_path = pg_catalog, pg_temp as $$
  select epmd_port, dist_port from overlay.firewall_setting
$$;
revoke execute on function overlay.broker_ports() from public;
grant execute on function overlay.broker_ports() to mesh_assignment;
comment on function overlay.broker_ports() is 'The broker cluster''s epmd and distribution ports, for the firewall (assignment 0021).';
