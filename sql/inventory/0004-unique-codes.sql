-- One code, one meaning (issue 16): set_overlay_key raised MSH68 for two
-- different refusals, and its codes sat in overlay's range (6x) though the
-- function is inventory's. Re-created unchanged but for the codes; every code
-- and its remedy is listed in the register, src/store/errors.ts.

/* Swap the overlay key from the one the node says it left to the one it
   took: a compare-and-swap, so a rekey replayed after a later one cannot
   bring an old key back. The same rekey told again (the node runs take
   again after a crash between telling and writing) is answered 'again'.
   Returns 'rekeyed' or 'again'; refusals raise MSH05 (not a key), MSH06
   (another node's key), MSH04 (not enrolled), MSH07 (a stale rekey). */
create or replace function inventory.set_overlay_key(node_name text, left_key bytea, taken_key bytea) returns text language plpgsql as $$
declare now_key bytea; other text;
begin
  if octet_length(taken_key) <> 32 or octet_length(left_key) <> 32 then
    raise exception 'an overlay key is 32 bytes' using errcode = 'MSH05',
      hint = 'send the raw 32-byte X25519 public key';
  end if;
  select n.name into other from inventory.node n where n.overlay_key = taken_key and n.name <> node_name;
  if other is not null then
    raise exception 'node % already holds the overlay key node % wants to take', other, node_name using errcode = 'MSH06',
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
  raise exception 'node % left an overlay key the mesh does not hold for it', node_name using errcode = 'MSH07',
    hint = 'the rekey is stale (a later one was recorded) or the node''s key file was changed by hand: run mesh-host overlay take again';
end $$;
