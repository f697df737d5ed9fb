-- The declare turn held across a declare committed in parts
-- (src/assignment/declare.ts): taken for the session on a connection of the
-- declare's own, released when it ends or that connection closes, while its
-- parts commit on other connections. The same lock take_declare_turn takes
-- for a transaction, so a declare in parts and any other declare, rollout
-- start or abort exclude each other as before: no declare's serials fall
-- between the parts of another.
create function assignment.declare_turn_key() returns bigint language sql immutable as $$
  select hashtext('mesh assignment declare')::bigint
$$;
comment on function assignment.declare_turn_key() is 'The advisory lock every declare takes before it composes (the declare turn).';

create or replace function assignment.take_declare_turn() returns void language sql as $$
  select pg_advisory_xact_lock(assignment.declare_turn_key())
$$;

create function assignment.hold_declare_turn() returns void language sql as $$
  select pg_advisory_lock(assignment.declare_turn_key())
$$;
comment on function assignment.hold_declare_turn() is 'Take the declare turn for this session, until release_declare_turn or the connection ends: a declare committed in parts holds it across them.';

create function assignment.release_declare_turn() returns void language sql as $$
  select pg_advisory_unlock(assignment.declare_turn_key())
$$;
comment on function assignment.release_declare_turn() is 'Give back the declare turn this session holds.';
