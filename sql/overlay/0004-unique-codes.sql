-- One code, one meaning (issue 16): set_address raised MSH63 both for an
-- address outside the range and for one another node holds. The second is
-- MSH64 now; every code and its remedy is listed in src/store/errors.ts.

/* Pin a node's address: for a tunnel taken over (O3), the mesh's interface
   must carry the address the found one had, or nothing that knew the found
   tunnel can find the node again. */
create or replace function overlay.set_address(node_name text, wanted inet) returns boolean language plpgsql as $$
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
    raise exception 'the overlay address % is held by node %', host(wanted), other using errcode = 'MSH64',
      hint = 'an address is never shared: choose another, or retire the node that holds it';
  end if;
  insert into overlay.address (node, address) values (node_name, set_masklen(wanted, 32))
  on conflict (node) do update set address = excluded.address, allocated_at = now()
    where overlay.address.address is distinct from excluded.address;
  return found;
end $$;
