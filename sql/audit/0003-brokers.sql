-- Which brokers the mesh tells its nodes to dial, and the certificate each
-- is pinned to, is history (issue 19.2, C3): a broker added, its fingerprint
-- or node changed (a certificate change), a broker removed.

insert into audit.kind (name, meaning) values
  ('broker-added',   'a broker nodes may dial was added: its address, pinned fingerprint and the node running it'),
  ('broker-changed', 'a broker''s pinned fingerprint (a certificate change) or the node running it changed'),
  ('broker-removed', 'a broker was removed from the list nodes dial');

/* inventory.broker: added (insert), changed (fingerprint or node), removed (delete). */
create function audit.on_broker() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
begin
  if tg_op = 'DELETE' then
    perform audit.append('broker-removed', old.node, jsonb_build_object('address', old.address, 'fingerprint', old.fingerprint));
  else
    perform audit.append(case when tg_op = 'INSERT' then 'broker-added' else 'broker-changed' end, new.node,
      jsonb_strip_nulls(jsonb_build_object('address', new.address, 'fingerprint', new.fingerprint, 'node', new.node)));
  end if;
  return null;
end $$;
create constraint trigger audit_broker_added after insert on inventory.broker deferrable initially deferred
  for each row execute function audit.on_broker();
create constraint trigger audit_broker_changed after update of fingerprint, node on inventory.broker deferrable initially deferred
  for each row when (new.fingerprint is distinct from old.fingerprint or new.node is distinct from old.node) execute function audit.on_broker();
create constraint trigger audit_broker_removed after delete on inventory.broker deferrable initially deferred
  for each row execute function audit.on_broker();
