-- A declare that names its nodes addresses those nodes, and checks the
-- hubs' capacity only when it composes a hub. Both ran over the whole fleet
-- on every declare: a module change to 100 of 100,000 nodes spent 0.09 s in
-- allocate_addresses' look for a node without an address (and for an address
-- without a node) and 0.05-0.13 s counting every member for
-- check_hub_capacity.
--
-- Why the named nodes alone: an enrolled node without an address is not an
-- overlay member (overlay.member joins the address), so it is nobody's peer
-- and nobody's firewall source; composing named nodes needs their own
-- addresses and no other. The fleet-wide call (names null, every declare
-- that does not name its nodes: enrolment, rekey, retire and every operator
-- command but a module's change) addresses every node waiting and releases
-- the addresses of nodes the inventory forgot.

drop function overlay.allocate_addresses();

/* Addresses for every enrolled node of NODE_NAMES (null: every enrolled
   node) that has none, lowest free first; with null, also the addresses of
   nodes no longer enrolled released. The number allocated. MSH60 when the
   range has none left. The table lock makes two concurrent declares allocate
   one after the other, so the unique constraint is never the thing that
   decides. */
create function overlay.allocate_addresses(node_names text[] default null) returns integer
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
declare
  net cidr;
  n record;
  made integer := 0;
begin
  if node_names is not null then
    if not exists (select 1 from inventory.enrolled_node e
                    where e.name = any(node_names) and not exists (select 1 from overlay.address a where a.node = e.name)) then
      return 0;
    end if;
  elsif not exists (select 1 from inventory.enrolled_node e where not exists (select 1 from overlay.address a where a.node = e.name))
     and not exists (select 1 from overlay.address a where not exists (select 1 from inventory.enrolled_node e where e.name = a.node)) then
    return 0;
  end if;
  lock table overlay.address in share row exclusive mode;
  if node_names is null then
    delete from overlay.address a where not exists (select 1 from inventory.enrolled_node e where e.name = a.node);
  end if;
  select s.network into net from overlay.settings s;
  -- One statement for every node waiting, lowest free addresses first: a
  -- loop that searched the range once per node was quadratic, minutes for
  -- the first declaration of ten thousand nodes.
  with want as (
    select e.name, row_number() over (order by e.enrolled_at, e.name) as rn
      from inventory.enrolled_node e
     where (node_names is null or e.name = any(node_names))
       and not exists (select 1 from overlay.address a where a.node = e.name)),
  free as (
    select set_masklen(net::inet, 32) + g as c, row_number() over (order by g) as rn
      from generate_series(1::bigint, (2::bigint ^ (32 - masklen(net)))::bigint - 2) g
     where not exists (select 1 from overlay.address a where a.address = set_masklen(net::inet, 32) + g)
     order by g
     limit (select count(*) from want))
  insert into overlay.address (node, address)
  select w.name, f.c from want w join free f on f.rn = w.rn;
  get diagnostics made = row_count;
  select e.name into n from inventory.enrolled_node e
   where (node_names is null or e.name = any(node_names))
     and not exists (select 1 from overlay.address a where a.node = e.name) limit 1;
  if found then
    raise exception 'the overlay range % has no free address for node %', net, n.name using errcode = 'MSH60',
      hint = 'retire nodes that are gone (mesh node retire NAME), or widen overlay.settings.network';
  end if;
  return made;
end $$;
revoke execute on function overlay.allocate_addresses(text[]) from public;
grant execute on function overlay.allocate_addresses(text[]) to mesh_assignment;
comment on function overlay.allocate_addresses(text[]) is 'Addresses for the enrolled nodes of NODE_NAMES (null: all) that have none, lowest free first; null also releases the addresses of nodes no longer enrolled. Refuses (MSH60) when the range is full.';

/* declare's check (O4): the spokes need more groups than there are hubs.
   Only a hub's declaration grows with the spokes, so a declare composing
   NODE_NAMES (null: every node) among which no hub is checks nothing:
   composing spokes cannot make a declaration too large to send. When it
   checks, members are counted by a join of two keys; hubs are few, looked
   up by name. */
drop function overlay.check_hub_capacity();
create function overlay.check_hub_capacity(node_names text[] default null) returns integer
language plpgsql stable security definer set search_path = pg_catalog, pg_temp as $$
declare
  hubs bigint; spokes bigint; cap integer; need bigint;
begin
  select count(*) into hubs from overlay.member m where m.name in (select node from overlay.hub) and m.hub;
  if hubs = 0 or (node_names is not null and not exists (select 1 from overlay.hub h where h.node = any(node_names))) then
    return greatest(1, hubs)::integer;
  end if;
  select count(*) - hubs into spokes from inventory.enrolled_node e join overlay.address a on a.node = e.name;
  select hub_spokes into cap from overlay.settings;
  need := ceil(spokes::numeric / cap);
  if need > hubs then
    raise exception '% spokes need at least % hubs of at most % spokes each, and the overlay has %', spokes, need, cap, hubs
      using errcode = 'MSHT1',
      hint = format('name %s more dialable nodes hubs (mesh overlay hub NODE); each hub''s declaration would otherwise pass the size limit', need - hubs);
  end if;
  return hubs::integer;
end $$;
revoke execute on function overlay.check_hub_capacity(text[]) from public;
grant execute on function overlay.check_hub_capacity(text[]) to mesh_assignment;
comment on function overlay.check_hub_capacity(text[]) is 'The number of hub groups, one a hub (O4); refuses (MSHT1) when the spokes need more hubs than there are and a hub is among NODE_NAMES (null: all).';
