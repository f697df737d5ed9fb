-- A node's overlay key may change once enrolled: a tunnel that existed before
-- the mesh is taken over and its key becomes the node's WireGuard key (O3).
-- Only the node says so, signed by its identity key (checked by serve with
-- inventory.identity_of); identity and sealing keys never change here, so
-- nothing sealed to the node has to be made again.

/* The identity key a node's signed statements are checked against. */
create function inventory.identity_of(node_name text) returns bytea language sql stable as $$
  select identity_key from inventory.node where name = node_name and enrolled_at is not null
$$;

/* Swap the overlay key from the one the node says it left to the one it
   took: a compare-and-swap, so a rekey replayed after a later one cannot
   bring an old key back. The same rekey told again (the node runs take
   again after a crash between telling and writing) is answered 'again'.
   Returns 'rekeyed' or 'again'; refusals raise. */
create function inventory.set_overlay_key(node_name text, left_key bytea, taken_key bytea) returns text language plpgsql as $$
declare now_key bytea; other text;
begin
  if octet_length(taken_key) <> 32 or octet_length(left_key) <> 32 then
    raise exception 'an overlay key is 32 bytes' using errcode = 'MSH68';
  end if;
  select n.name into other from inventory.node n where n.overlay_key = taken_key and n.name <> node_name;
  if other is not null then
    raise exception 'node % already holds the overlay key node % wants to take', other, node_name using errcode = 'MSH69',
      hint = 'two nodes with one key would fight over every peer entry: give the tunnel its own key';
  end if;
  update inventory.node n set overlay_key = taken_key, last_seen = now()
   where n.name = node_name and n.enrolled_at is not null and n.overlay_key = left_key
  returning n.overlay_key into now_key;
  if found then return 'rekeyed'; end if;
  select n.overlay_key into now_key from inventory.node n where n.name = node_name and n.enrolled_at is not null;
  if not found then
    raise exception 'no enrolled node %', node_name using errcode = 'MSH04';
  end if;
  if now_key = taken_key then return 'again'; end if;
  raise exception 'node % left an overlay key the mesh does not hold for it', node_name using errcode = 'MSH68',
    hint = 'the rekey is stale (a later one was recorded) or the node''s key file was changed by hand: run mesh-host overlay take again';
end $$;
