-- Every rollout step is history (issue 20): held, started, each wave
-- released, paused, resumed, halted (with why), done, aborted, released.

insert into audit.kind (name, meaning) values
  ('rollout', 'a rollout moved: held, a wave released, paused, halted (and why), resumed, done, aborted or released');

/* assignment.rollout: a new row (a hold) or a change of state or wave. */
create function audit.on_rollout() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
begin
  perform audit.append('rollout', null, jsonb_strip_nulls(jsonb_build_object('rollout', new.id, 'state', new.state, 'wave', new.wave,
    'waves', array_to_string(new.waves, ','), 'reason', new.reason)));
  return null;
end $$;
create constraint trigger audit_rollout_held after insert on assignment.rollout deferrable initially deferred
  for each row execute function audit.on_rollout();
create constraint trigger audit_rollout_moved after update of state, wave on assignment.rollout deferrable initially deferred
  for each row when (new.state is distinct from old.state or new.wave is distinct from old.wave) execute function audit.on_rollout();
