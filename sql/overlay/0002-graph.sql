-- overlay: addresses, hubs and the peer graph the mesh computes (O1). The
-- rules are here, in SQL; the control plane only reads overlay.node_resources
-- (through assignment.compose) and the host only applies what it is told.

create table overlay.settings (
  one         boolean primary key default true check (one),
  network     cidr not null default '10.99.0.0/16' check (family(network) = 4 and masklen(network) between 8 and 30),
  listen_port integer not null default 51820 check (listen_port between 1 and 65535),
  keepalive   integer not null default 25 check (keepalive between 1 and 3600),
  interface   text not null default 'mesh0' check (interface ~ '^[a-z][a-z0-9]{0,14}$')
);
comment on table overlay.settings is 'The overlay of this mesh: one row.';
comment on column overlay.settings.one is 'Always true: there is one overlay.';
comment on column overlay.settings.network is 'The overlay range; every node''s address is in it and a spoke routes all of it through its hub.';
comment on column overlay.settings.listen_port is 'The UDP port a dialable node listens on (its port forward must lead there).';
comment on column overlay.settings.keepalive is 'Seconds between keepalives a node behind NAT sends, so its router keeps the path open for the answers.';
comment on column overlay.settings.interface is 'The interface name every node raises.';
insert into overlay.settings default values;

create table overlay.address (
  node         text primary key,
  address      inet not null unique check (masklen(address) = 32),
  allocated_at timestamptz not null default now()
);
comment on table overlay.address is 'One overlay address a node: unique, and never handed to another node while its holder is enrolled.';
comment on column overlay.address.node is 'The inventory node holding it.';
comment on column overlay.address.address is 'A host address (/32) inside overlay.settings.network.';
comment on column overlay.address.allocated_at is 'When it was allocated or pinned.';

create table overlay.hub (
  node     text primary key,
  named_at timestamptz not null default now()
);
comment on table overlay.hub is 'Nodes that forward between spokes (O1, O2). Every other node peers with every hub.';
comment on column overlay.hub.node is 'The inventory node that is a hub.';
comment on column overlay.hub.named_at is 'When the operator named it a hub.';

/* Give every enrolled node an address, lowest free first. Called by `mesh
   declare` (and `mesh overlay show`) before composing, because a view cannot
   write and compose is only a read: the address must exist before the first
   declaration that carries it. Security definer so the composing context can
   call it without holding our tables. Addresses of nodes the inventory forgot
   (retired) are released here; an enrolled node keeps its address for ever.
   The table lock makes two concurrent declares allocate one after the other,
   so the unique constraint is never the thing that decides. */
create function overlay.allocate_addresses() returns integer
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
declare
  net cidr;
  n record;
  made integer := 0;
begin
  if not exists (select 1 from inventory.enrolled_node e where not exists (select 1 from overlay.address a where a.node = e.name))
     and not exists (select 1 from overlay.address a where not exists (select 1 from inventory.enrolled_node e where e.name = a.node)) then
    return 0;
  end if;
  lock table overlay.address in share row exclusive mode;
  delete from overlay.address a where not exists (select 1 from inventory.enrolled_node e where e.name = a.node);
  select s.network into net from overlay.settings s;
  -- One statement for every node waiting, lowest free addresses first: a
  -- loop that searched the range once per node was quadratic, minutes for
  -- the first declaration of ten thousand nodes.
  with want as (
    select e.name, row_number() over (order by e.enrolled_at, e.name) as rn
      from inventory.enrolled_node e
     where not exists (select 1 from overlay.address a where a.node = e.name)),
  free as (
    select set_masklen(net::inet, 32) + g as c, row_number() over (order by g) as rn
      from generate_series(1::bigint, (2::bigint ^ (32 - masklen(net)))::bigint - 2) g
     where not exists (select 1 from overlay.address a where a.address = set_masklen(net::inet, 32) + g)
     order by g
     limit (select count(*) from want))
  insert into overlay.address (node, address)
  select w.name, f.c from want w join free f on f.rn = w.rn;
  get diagnostics made = row_count;
  if exists (select 1 from inventory.enrolled_node e where not exists (select 1 from overlay.address a where a.node = e.name)) then
    select e.name into n from inventory.enrolled_node e where not exists (select 1 from overlay.address a where a.node = e.name) limit 1;
    raise exception 'the overlay range % has no free address for node %', net, n.name using errcode = 'MSH60',
      hint = 'retire nodes that are gone (mesh node retire NAME), or widen overlay.settings.network';
  end if;
  return made;
end $$;
revoke execute on function overlay.allocate_addresses() from public;
grant execute on function overlay.allocate_addresses() to mesh_assignment;

/* Pin a node's address: for a tunnel taken over (O3), the mesh's interface
   must carry the address the found one had, or nothing that knew the found
   tunnel can find the node again. */
create function overlay.set_address(node_name text, wanted inet) returns boolean language plpgsql as $$
declare net cidr; other text;
begin
  if not exists (select 1 from inventory.enrolled_node where name = node_name) then
    raise exception 'no enrolled node named %', node_name using errcode = 'MSH61', hint = 'see mesh node list';
  end if;
  select s.network into net from overlay.settings s;
  if not (wanted << net) or host(wanted) = host(net) or host(wanted) = host(broadcast(net)) then
    raise exception '% is not a host address in the overlay range %', host(wanted), net using errcode = 'MSH63',
      hint = 'choose an address inside the range, neither its first nor its last';
  end if;
  select a.node into other from overlay.address a where a.address = set_masklen(wanted, 32) and a.node <> node_name;
  if other is not null then
    raise exception 'the overlay address % is held by node %', host(wanted), other using errcode = 'MSH63',
      hint = 'an address is never shared: choose another, or retire the node that holds it';
  end if;
  insert into overlay.address (node, address) values (node_name, set_masklen(wanted, 32))
  on conflict (node) do update set address = excluded.address, allocated_at = now()
    where overlay.address.address is distinct from excluded.address;
  return found;
end $$;

/* Name a node a hub, or stop it being one. A hub must be dialable: every
   spoke dials it, and a spoke behind NAT has no other way in. */
create function overlay.set_hub(node_name text, on_off boolean) returns boolean language plpgsql as $$
declare n record;
begin
  select e.name, e.dialable into n from inventory.enrolled_node e where e.name = node_name;
  if not found then
    raise exception 'no enrolled node named %', node_name using errcode = 'MSH61', hint = 'see mesh node list';
  end if;
  if on_off then
    if n.dialable is null then
      raise exception 'node % cannot be a hub: nothing can dial it', node_name using errcode = 'MSH62',
        hint = format('a hub needs a dialable address: retire it and issue its token again with --dialable HOST:PORT (mesh token issue %s --dialable ...)', node_name);
    end if;
    insert into overlay.hub (node) values (node_name) on conflict do nothing;
  else
    delete from overlay.hub where node = node_name;
  end if;
  return found;
end $$;

/* Who is in the overlay: enrolled nodes that hold an address. */
create view overlay.member as
select e.name, e.site, e.dialable, encode(e.overlay_key, 'base64') as public_key, a.address,
       exists (select 1 from overlay.hub h where h.node = e.name) and e.dialable is not null as hub
  from inventory.enrolled_node e
  join overlay.address a on a.node = e.name;
comment on view overlay.member is 'Enrolled nodes with an overlay address; hub only while it is also dialable.';

/* The peer graph (O1), one row for each peer in each node's list.
   - Every node peers with every hub: a hub forwards between its spokes.
   - Two other nodes peer directly only at one site and only when one end can
     be dialled; nobody opens a path between two that cannot, and a direct
     route there would be more specific than the hub's and blackhole.
   - Each pair is one row whatever the reasons for it, so a hub that is also
     a same-site direct peer appears once (WireGuard takes one entry a key).
   - A spoke routes the whole range through one hub (its own site's first,
     then by name): that entry carries the range, every other one its /32.
   - A node nothing can dial keeps every path open with keepalives; its
     peers are all dialable, since an edge needs one dialable end.
   A function rather than a view, with jit off: on tables the planner has no
   statistics for yet, the self-join is estimated at millions of rows and
   PostgreSQL spent 2 s compiling it for a handful (measured), in every
   compose. Security definer: assignment reads it through node_resources and
   holds none of our tables. */
create function overlay.peers() returns table (node text, peer text, public_key text, endpoint text, allowed_ips text[], keepalive integer, route boolean, reason text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 200 as $$
  with s as (select network, keepalive from overlay.settings),
       m as (select * from overlay.member),
       route as (
         select distinct on (a.name) a.name as node, h.name as hub
           from m a join m h on h.hub and h.name <> a.name
          where not a.hub
          order by a.name, (h.site = a.site) desc, h.name)
  select a.name, b.name, b.public_key, b.dialable,
         case when r.hub is not null then array[s.network::text] else array[host(b.address) || '/32'] end,
         case when a.dialable is null then s.keepalive end,
         r.hub is not null,
         case when a.hub or b.hub then 'hub' else 'site' end
    from m a
    join m b on b.name <> a.name
     and (a.hub or b.hub or (a.site = b.site and (a.dialable is not null or b.dialable is not null)))
    cross join s
    left join route r on r.node = a.name and r.hub = b.name
$$;
revoke execute on function overlay.peers() from public;
grant execute on function overlay.peers() to mesh_assignment;

create view overlay.peering as select * from overlay.peers();
comment on view overlay.peering is 'Node N has peer P: its key, endpoint (only where P can be dialled), allowed IPs (the range through its route hub, else P''s /32), keepalive (only when N cannot be dialled), route (P is N''s route hub), reason (hub or site).';

/* Each node's interface, for its declaration. A node with no peer gets no
   interface: alone, or with no hub and nobody dialable at its site, it has
   nothing to tunnel to. Peers sorted by key, so one graph is one set of bytes.
   Jit off and security definer for the reasons over overlay.peers. */
create function overlay.interfaces() returns table (node text, resource jsonb)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  with s as (select network, listen_port, interface from overlay.settings),
       p as (select * from overlay.peers())
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
revoke execute on function overlay.interfaces() from public;
grant execute on function overlay.interfaces() to mesh_assignment;

create or replace view overlay.node_resources as select node, resource from overlay.interfaces();
comment on view overlay.node_resources is 'The wireguard resource of each node that has a peer: address, listen port when dialable, hub flag, peers sorted by key.';

-- mesh overlay show reads these as the overlay context itself; assignment
-- reads node_resources (granted in 0001) and calls allocate_addresses.
