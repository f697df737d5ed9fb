-- Each refusal a host reported is filed under its own kind, so `mesh log
-- --kind refused-forged` is somebody trying and nothing else; `--kind refused`
-- is the whole family. A refusal said again by the same node is counted on
-- its row in inventory.refusal (times, first_at, refused_at: inventory/0013)
-- and is not a row of the history again.

insert into audit.kind (name, meaning) values
  ('refused-forged',    'a host refused a declaration not signed by this mesh''s key, or for another mesh or node: somebody is trying (D1)'),
  ('refused-malformed', 'a host refused a declaration not of its form: something needs fixing (D1)'),
  ('refused-replayed',  'a host refused the mesh''s own declaration, not newer than the one it applied (D2): delivered again, not forged'),
  ('refused-stale',     'a host refused a declaration that expired before it arrived (C2)');
update audit.kind set meaning = 'a host refused a declaration (rows kept before refusals were filed by kind: its fault is in the row)'
 where name = 'refused';

/* inventory.refusal: a refusal first said (times 1), under its kind; a repeat is counted there, not here. */
create or replace function audit.on_refusal() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
begin
  if new.times > 1 then return null; end if;
  perform audit.append('refused-' || new.fault, new.node, jsonb_build_object('serial', new.serial, 'fault', new.fault, 'reason', new.reason));
  return null;
end $$;
