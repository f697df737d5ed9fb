-- inventory: when each node's overlay key last changed, and what the path
-- answers (Q2) read of each node. A rekey (O3) changes the key every peer
-- list carries; until a peer has applied a declaration issued after the
-- change, it still holds the old key and drops what the node sends. The
-- time of the change is what lets `mesh overlay why` name that fact.

alter table inventory.node add column overlay_key_at timestamptz;
comment on column inventory.node.overlay_key_at is 'When its overlay key last changed (a rekey, O3); null while it holds the key it enrolled with.';

/* As 0004, and the swap records when the key changed. */
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
  update inventory.node n set overlay_key = taken_key, overlay_key_at = now(), last_seen = now()
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

/* Each enrolled node as a path through it depends on it: in touch, holding
   a declaration that has not expired, applying without failures, the serial
   it last reported applied, and when its overlay key changed. */
create view inventory.path_end as
select s.name, s.state, s.stale, coalesce(s.failing, 0) as failing, s.reported_serial, n.overlay_key_at
  from inventory.node_status s join inventory.node n on n.name = s.name
 where n.enrolled_at is not null;
comment on view inventory.path_end is 'Each enrolled node as a path through it needs it: state (here, wedged, out of touch, never spoken), stale, failing (resources its last apply could not finish), the serial it last reported applied, and when its overlay key last changed (Q2).';
comment on column inventory.path_end.name is 'The node.';
comment on column inventory.path_end.state is 'here, wedged, out of touch Nm, or never spoken (inventory.node_status).';
comment on column inventory.path_end.stale is 'The declaration it holds has expired (C2).';
comment on column inventory.path_end.failing is 'Resources its last apply could not finish.';
comment on column inventory.path_end.reported_serial is 'The serial it last reported applied; null: never reported.';
comment on column inventory.path_end.overlay_key_at is 'When its overlay key last changed; null: never since enrolment.';
grant select on inventory.path_end to mesh_assignment;
