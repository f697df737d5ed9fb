-- Every change-freeze window made, overridden (with the operator's reason)
-- or removed is history: an override is the explicit act of sending what a
-- window promised to hold.

insert into audit.kind (name, meaning) values
  ('freeze', 'a change-freeze window was made, overridden early (and why) or removed');

/* assignment.freeze: a window made, overridden or removed. */
create function audit.on_freeze() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
declare f assignment.freeze := coalesce(new, old);
begin
  perform audit.append('freeze', null, jsonb_strip_nulls(jsonb_build_object('freeze', f.id,
    'act', case when tg_op = 'INSERT' then 'made' when tg_op = 'DELETE' then 'removed' else 'overridden' end,
    'from', f.from_at, 'until', f.until_at, 'site', f.site, 'module', f.module, 'reason', f.override_reason)));
  return null;
end $$;
create constraint trigger audit_freeze_made after insert or delete on assignment.freeze deferrable initially deferred
  for each row execute function audit.on_freeze();
create constraint trigger audit_freeze_overridden after update of overridden_at on assignment.freeze deferrable initially deferred
  for each row when (new.overridden_at is distinct from old.overridden_at) execute function audit.on_freeze();
insert into audit.watched (on_table, trigger) values
  ('assignment."freeze"', 'audit_freeze_made'), ('assignment."freeze"', 'audit_freeze_overridden');
