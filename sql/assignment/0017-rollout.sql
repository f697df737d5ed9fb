-- Rollout in waves (issue 20). W2 declares every change at once; a rollout
-- holds the changes instead and releases them wave by wave.
--
--   hold_changes()    opens a rollout (holding): from now on a node that was
--                     declared before gets no new composition until released.
--                     A node never declared still gets its first (nothing to
--                     roll out from). Enrolments, retires and rotations made
--                     while holding wait with the rest: the hold is on
--                     compositions, whatever changed them.
--   start_rollout()   fixes the waves over the nodes whose change is held,
--                     canaries first (pinned, then by the hash of the name, so
--                     the choice is deterministic), and releases wave 1.
--   advance_rollout() the step serve takes (and every command that moves a
--                     rollout): the wave out now passes when each of its
--                     nodes reported its newest declaration applied with
--                     nothing failing; it halts when more nodes fail than
--                     max_failing allows, or the wait runs out. Safe to run
--                     from any number of serve processes (the rollout row is
--                     locked).
--   abort_rollout()   owes every node already reached the declaration it had
--                     before (restore_owed, so a crash loses nothing) and
--                     holds the changes again.
--   release_hold()    lifts the hold: every held change goes out at once.
--
-- A released node is out of the hold: a later change to it (a fix) reaches it
-- at once. The state lives here, so a serve restart resumes the rollout.

create table assignment.rollout (
  id           bigint generated always as identity primary key,
  state        text not null default 'holding'
               check (state in ('holding', 'rolling', 'paused', 'halted', 'done', 'aborted', 'released')),
  waves        text[],
  wait_healthy interval not null default interval '2 minutes' check (wait_healthy > interval '0'),
  max_failing  integer not null default 0 check (max_failing >= 0),
  first        text[] not null default '{}',
  wave         integer not null default 0 check (wave >= 0),
  wave_started timestamptz,
  resumed_at   timestamptz,
  reason       text,
  held_at      timestamptz not null default now(),
  started_at   timestamptz,
  ended_at     timestamptz,
  check ((state in ('done', 'aborted', 'released')) = (ended_at is not null))
);
-- At most one rollout is open: two holds could never agree on what is released.
create unique index rollout_one_open on assignment.rollout ((true)) where state in ('holding', 'rolling', 'paused', 'halted');
comment on table assignment.rollout is 'Each rollout: a hold on changed compositions, then their release wave by wave. At most one is open (holding, rolling, paused, halted).';
comment on column assignment.rollout.state is 'holding: changes wait; rolling: waves go out; paused or halted: no new wave; done, aborted, released: ended.';
comment on column assignment.rollout.waves is 'The waves as given (1, 10%, 100%): each the number or share of the rollout''s nodes reached by its end.';
comment on column assignment.rollout.wait_healthy is 'How long a wave may take to report applied before the rollout halts.';
comment on column assignment.rollout.max_failing is 'How many released nodes may fail before the rollout halts.';
comment on column assignment.rollout.first is 'Canaries pinned by the operator, in order.';
comment on column assignment.rollout.wave is 'The wave out now (1-based); 0 before the start.';
comment on column assignment.rollout.wave_started is 'When the wave out now was released (or resumed): the wait counts from here.';
comment on column assignment.rollout.resumed_at is 'When it was last resumed: a failure reported before then is old news (the machine may be fixed) until the node says so again.';
comment on column assignment.rollout.reason is 'Why it halted or was aborted, naming the nodes.';

create table assignment.rollout_node (
  rollout      bigint not null references assignment.rollout (id),
  node         text not null,
  wave         integer not null check (wave > 0),
  position     integer not null check (position > 0),
  from_serial  bigint not null,
  released_at  timestamptz,
  nothing_owed boolean not null default false,
  restore_owed boolean not null default false,
  primary key (rollout, node)
);
create index rollout_node_wave on assignment.rollout_node (rollout, wave);
comment on table assignment.rollout_node is 'Each node a rollout changes: its wave, its place in the canary order, and the declaration it held before.';
comment on column assignment.rollout_node.from_serial is 'Its newest declaration when the rollout started: what an abort declares again.';
comment on column assignment.rollout_node.released_at is 'When its wave went out; null while held.';
comment on column assignment.rollout_node.nothing_owed is 'Released, but its composition no longer differed (the change was undone): nothing to apply.';
comment on column assignment.rollout_node.restore_owed is 'Aborted after it was reached: the declaration it held before is owed to it again.';

/* The open rollout, locked for this transaction when LOCKED. */
create function assignment.open_rollout() returns assignment.rollout language sql stable as $$
  select r from assignment.rollout r where r.state in ('holding', 'rolling', 'paused', 'halted')
$$;

/* The two refusals every rollout command shares: nothing open, or a state
   that does not allow VERB. One message each, wherever they are raised. */
create function assignment.refuse_move(r assignment.rollout, verb text) returns void language plpgsql as $$
begin
  if r.id is null then
    raise exception 'no change is held' using errcode = 'MSH24',
      hint = 'start with mesh rollout hold, make the changes, then mesh rollout start; mesh rollout status shows the last rollout';
  end if;
  raise exception 'rollout % is %: it cannot %', r.id, r.state, verb using errcode = 'MSH29',
    hint = case verb when 'start' then 'it started already: see mesh rollout status; pause, resume or abort it'
                     when 'pause' then 'only a rolling rollout pauses: see mesh rollout status'
                     when 'resume' then 'only a paused or halted rollout resumes: see mesh rollout status'
                     else 'nothing went out yet: mesh rollout release lifts the hold, or leave it held' end;
end $$;

/* A rollout setting that cannot be used: one message, the detail as its argument. */
create function assignment.refuse_setting(detail text, remedy text) returns void language plpgsql as $$
begin
  raise exception 'the rollout cannot use %', detail using errcode = 'MSH25', hint = remedy;
end $$;

/* The nodes whose change is held now: every node declared before, while a
   rollout is open, except those its waves released. */
create function assignment.held_nodes() returns table (node text) language sql stable as $$
  select s.node
    from assignment.node_serial s
    join assignment.rollout r on r.state in ('holding', 'rolling', 'paused', 'halted')
   where not exists (select 1 from assignment.rollout_node n
                      where n.rollout = r.id and n.node = s.node and n.released_at is not null)
$$;

/* An explicit declare (mesh declare NODE, --all) may not release a held change. */
create function assignment.refuse_held(node_names text[]) returns void language plpgsql as $$
declare r assignment.rollout := assignment.open_rollout();
begin
  if coalesce(cardinality(node_names), 0) > 0 then
    raise exception 'the change to % is held by rollout %, which is %', array_to_string(node_names, ', '), r.id, r.state
      using errcode = 'MSH28', hint = 'release it with mesh rollout start (in waves) or mesh rollout release (at once); see mesh plan --all';
  end if;
end $$;

create function assignment.hold_changes() returns bigint language plpgsql as $$
declare r assignment.rollout := assignment.open_rollout(); made bigint;
begin
  if r.id is not null then
    raise exception 'rollout % is already open (%)', r.id, r.state
      using errcode = 'MSH23', hint = 'one rollout at a time: see mesh rollout status; end it with mesh rollout release or abort';
  end if;
  insert into assignment.rollout default values returning id into made;
  return made;
end $$;

/* The cumulative node count each wave reaches, for TOTAL nodes: '1' is one
   node, '10%' a tenth rounded up; the last must reach them all; a wave that
   adds nobody (1,1%,... of a few nodes) is dropped. */
create function assignment.wave_sizes(waves text[], total integer) returns integer[] language plpgsql immutable as $$
declare w text; n integer; prev integer := 0; out integer[] := '{}';
begin
  if coalesce(cardinality(waves), 0) = 0 then
    perform assignment.refuse_setting('no waves', 'give the waves as counts or shares, ending at 100%: --waves 1,10%,50%,100%');
  end if;
  foreach w in array waves loop
    if w ~ '^[0-9]{1,3}%$' and substr(w, 1, length(w) - 1)::int between 1 and 100 then
      n := ceil(total * substr(w, 1, length(w) - 1)::numeric / 100)::int;
    elsif w ~ '^[0-9]{1,9}$' and w::int >= 1 then
      n := least(w::int, total);
    else
      perform assignment.refuse_setting(format('the wave %s: it is not a count or a share', quote_literal(w)),
        'each wave is a count of nodes (1) or a share of them (10%), separated by commas: --waves 1,10%,50%,100%');
    end if;
    if n < prev then
      perform assignment.refuse_setting(format('the wave %s: it reaches fewer nodes (%s) than the one before it (%s)', w, n, prev),
        'waves count the nodes reached so far, so each is at least the one before: --waves 1,10%,50%,100%');
    end if;
    if n > prev then out := out || n; end if;
    prev := n;
  end loop;
  if prev < total then
    perform assignment.refuse_setting(format('waves whose last reaches %s of the %s nodes', prev, total), 'end the waves at every node: --waves 1,10%,100%');
  end if;
  return out;
end $$;

create function assignment.start_rollout(wave_list text[], wait interval, failing_allowed integer, canaries text[])
returns bigint language plpgsql as $$
declare r assignment.rollout := assignment.open_rollout(); sizes integer[]; total integer; stray text; pend text[];
begin
  if r.id is null or r.state <> 'holding' then perform assignment.refuse_move(r, 'start'); end if;
  if wait is null or wait <= interval '0' then
    perform assignment.refuse_setting(format('a wait of %s for a wave to report healthy', coalesce(wait::text, 'nothing')), 'give each wave time to apply and report: --wait-healthy 2m');
  end if;
  if failing_allowed is null or failing_allowed < 0 then
    perform assignment.refuse_setting(format('%s failing nodes allowed', coalesce(failing_allowed::text, 'no number of')), '--max-failing 0 halts on the first failure');
  end if;
  perform assignment.take_declare_turn();
  select coalesce(array_agg(c.node), '{}') into pend
    from assignment.compose_each(null) c
    join assignment.held_nodes() h on h.node = c.node
   where c.changed;
  total := cardinality(pend);
  if total = 0 then
    raise exception 'no held change differs from what the nodes hold'
      using errcode = 'MSH27', hint = 'make the changes first (mesh plan --all shows what is pending), then mesh rollout start';
  end if;
  select c into stray from unnest(coalesce(canaries, '{}')) c where c <> all(pend) limit 1;
  if stray is not null then
    raise exception 'the canary % has no held change', stray
      using errcode = 'MSH26', hint = 'pin with --first only nodes the rollout changes: see mesh plan --all';
  end if;
  sizes := assignment.wave_sizes(wave_list, total);
  insert into assignment.rollout_node (rollout, node, wave, position, from_serial)
  select r.id, o.node,
         (select min(i) from generate_subscripts(sizes, 1) i where sizes[i] >= o.position),
         o.position, s.serial
    from (select p.node, row_number() over (order by array_position(canaries, p.node) nulls last, sha256(convert_to(p.node, 'utf8')))::int as position
            from unnest(pend) p(node)) o
    join assignment.node_serial s on s.node = o.node;
  update assignment.rollout
     set state = 'rolling', waves = wave_list, wait_healthy = wait, max_failing = failing_allowed,
         first = coalesce(canaries, '{}'), started_at = now()
   where id = r.id;
  perform pg_notify('mesh_rollout', r.id::text);
  return r.id;
end $$;

/* How each node of rollout R stands: held, waiting, applied, failing (with
   why). The one reading of health: advance_rollout, the view and the CLI. */
create function assignment.rollout_node_state(rollout_id bigint)
returns table (node text, wave integer, "position" integer, from_serial bigint, newest_serial bigint, released_at timestamptz, state text, why text)
language sql stable as $$
  select n.node, n.wave, n.position, n.from_serial, s.serial, n.released_at,
         case when n.released_at is null then 'held'
              when n.restore_owed then 'restoring'
              when f.fresh or x.fresh then 'failing'
              when n.nothing_owed or (s.serial > n.from_serial and d.acknowledged_at is not null) then 'applied'
              else 'waiting' end,
         case when n.released_at is null then 'not yet released'
              when n.restore_owed then format('owed declaration %s again (the rollout was aborted)', n.from_serial)
              when f.node is not null and (f.fresh or not coalesce(x.fresh, false)) then format('declaration %s could not apply %s%s', f.serial,
                     (select string_agg(e->>'id' || ': ' || (e->>'error'), '; ') from jsonb_array_elements(f.failed) e),
                     case when f.fresh then '' else ' (before the resume: waiting for a clean report)' end)
              when x.node is not null then format('refused declaration %s: %s: %s%s', x.serial, x.fault, x.reason,
                     case when x.fresh then '' else ' (before the resume: waiting for a clean report)' end)
              when n.nothing_owed then 'nothing to apply: its composition no longer differed'
              when s.serial > n.from_serial and d.acknowledged_at is not null then format('applied declaration %s', s.serial)
              when s.serial = n.from_serial then 'released, not yet declared'
              else format('declaration %s not yet reported applied', s.serial) end
    from assignment.rollout_node n
    join assignment.rollout r on r.id = n.rollout
    join assignment.node_serial s on s.node = n.node
    join inventory.enrolled_node e on e.name = n.node  -- a node retired mid-rollout is out of it
    left join assignment.declaration d on d.node = n.node and d.serial = s.serial
    -- A failure counts against the newest declaration only, and only if told since the last resume.
    left join lateral (select f.*, f.reported_at >= coalesce(r.resumed_at, '-infinity') as fresh from inventory.apply_failure f
                        where f.node = n.node and f.serial >= s.serial and s.serial > n.from_serial) f on true
    left join lateral (select x.*, x.refused_at >= coalesce(r.resumed_at, '-infinity') as fresh from inventory.refusal x
                        where x.node = n.node and x.serial >= s.serial and s.serial > n.from_serial and x.refused_at >= n.released_at) x on true
   where n.rollout = rollout_id
$$;

/* One step of the open rollout, if it is rolling: release wave 1, pass the
   wave out now to the next (or finish), or halt. Returns the rollout's state
   after the step and the released nodes still owed their declaration, which
   the caller declares (W2 skips none of them: they are out of the hold). */
create function assignment.advance_rollout()
returns table (rollout bigint, state text, wave integer, undeclared text[]) language plpgsql as $$
declare r assignment.rollout; last_wave integer; bad text; late text; nfail integer;
begin
  select * into r from assignment.rollout o where o.state = 'rolling' for update;
  if r.id is null then return; end if;
  select max(n.wave) into last_wave from assignment.rollout_node n where n.rollout = r.id;
  if r.wave > 0 then
    select count(*), string_agg(format('%s: %s', s.node, s.why), '; ' order by s.position)
      into nfail, bad
      from assignment.rollout_node_state(r.id) s where s.state = 'failing';
    if nfail > r.max_failing then
      update assignment.rollout o set state = 'halted', reason = format('%s failing (at most %s allowed): %s', nfail, r.max_failing, bad) where o.id = r.id;
      return query select r.id, 'halted'::text, r.wave, '{}'::text[];
      return;
    end if;
    select string_agg(format('%s: %s', s.node, s.why), '; ' order by s.position) into late
      from assignment.rollout_node_state(r.id) s
     where s.wave <= r.wave and s.state in ('waiting', 'restoring');
    if late is not null then
      if now() - r.wave_started > r.wait_healthy then
        update assignment.rollout o set state = 'halted',
               reason = format('wave %s did not report healthy within %s: %s', r.wave, r.wait_healthy, late) where o.id = r.id;
        return query select r.id, 'halted'::text, r.wave, '{}'::text[];
        return;
      end if;
      return query select r.id, r.state, r.wave,
        coalesce((select array_agg(s.node order by s.position) from assignment.rollout_node_state(r.id) s
                   where s.wave <= r.wave and s.why = 'released, not yet declared'), '{}');
      return;
    end if;
    if r.wave >= last_wave then
      update assignment.rollout o set state = 'done', ended_at = now(), reason = null where o.id = r.id;
      return query select r.id, 'done'::text, r.wave, '{}'::text[];
      return;
    end if;
  end if;
  update assignment.rollout o set wave = r.wave + 1, wave_started = now(), reason = null where o.id = r.id;
  update assignment.rollout_node n set released_at = now() where n.rollout = r.id and n.wave = r.wave + 1;
  return query select r.id, 'rolling'::text, r.wave + 1,
    (select coalesce(array_agg(n.node order by n.position), '{}') from assignment.rollout_node n where n.rollout = r.id and n.wave = r.wave + 1);
end $$;

/* Released nodes the caller tried to declare and found unchanged: nothing to apply. */
create function assignment.note_unchanged(rollout_id bigint, node_names text[]) returns void language sql as $$
  update assignment.rollout_node n set nothing_owed = true
   where n.rollout = rollout_id and n.node = any(node_names) and n.released_at is not null
     and (select s.serial from assignment.node_serial s where s.node = n.node) = n.from_serial
$$;

/* pause: rolling -> paused; resume: paused or halted -> rolling, the wait
   starting again. */
create function assignment.move_rollout(verb text) returns bigint language plpgsql as $$
declare r assignment.rollout := assignment.open_rollout();
begin
  if verb = 'pause' and r.state = 'rolling' then
    update assignment.rollout set state = 'paused' where id = r.id;
  elsif verb = 'resume' and r.state in ('paused', 'halted') then
    update assignment.rollout set state = 'rolling', wave_started = now(), resumed_at = now(), reason = null where id = r.id;
    perform pg_notify('mesh_rollout', r.id::text);
  else
    perform assignment.refuse_move(r, verb);
  end if;
  return r.id;
end $$;

/* abort: every node already reached is owed the declaration it held before;
   the changes are held again (a new rollout, holding) until the truth is put
   right or released. */
create function assignment.abort_rollout(why text) returns bigint language plpgsql as $$
declare r assignment.rollout := assignment.open_rollout();
begin
  if r.id is null or r.state = 'holding' then perform assignment.refuse_move(r, 'abort'); end if;
  perform assignment.take_declare_turn();
  update assignment.rollout_node n set restore_owed = true
   where n.rollout = r.id and n.released_at is not null
     and (select s.serial from assignment.node_serial s where s.node = n.node) > n.from_serial;
  update assignment.rollout set state = 'aborted', ended_at = now(), reason = coalesce(why, 'aborted by the operator') where id = r.id;
  insert into assignment.rollout default values;
  return r.id;
end $$;

/* What abort still owes: node and the serial whose resources it gets again. */
create function assignment.restores_owed() returns table (rollout bigint, node text, from_serial bigint) language sql stable as $$
  select n.rollout, n.node, n.from_serial from assignment.rollout_node n
   where n.restore_owed and exists (select 1 from inventory.enrolled_node e where e.name = n.node)
   order by n.rollout, n.position
$$;

/* Called in the transaction that recorded the restoring declarations. */
create function assignment.restored(rollout_id bigint, node_names text[]) returns void language sql as $$
  update assignment.rollout_node set restore_owed = false where rollout = rollout_id and node = any(node_names)
$$;

/* release: the hold ends; every held change goes out at once (W2). */
create function assignment.release_hold() returns bigint language plpgsql as $$
declare r assignment.rollout := assignment.open_rollout();
begin
  if r.id is null then perform assignment.refuse_move(r, 'release'); end if;
  update assignment.rollout set state = 'released', ended_at = now() where id = r.id;
  return r.id;
end $$;

/* For a DBA, the console and `mesh rollout status`: each rollout and how far it is. */
create view assignment.rollout_status as
select r.id, r.state, r.wave, cardinality(r.waves) as waves_given,
       (select max(n.wave) from assignment.rollout_node n where n.rollout = r.id) as waves,
       r.waves as wave_list, r.wait_healthy, r.max_failing, r.first,
       (select count(*) from assignment.rollout_node n where n.rollout = r.id)::int as nodes,
       (select count(*) from assignment.rollout_node n where n.rollout = r.id and n.released_at is not null)::int as released,
       s.applied, s.failing, s.waiting,
       r.reason, r.held_at, r.started_at, r.wave_started, r.ended_at
  from assignment.rollout r
  cross join lateral (
    select count(*) filter (where x.state = 'applied')::int as applied,
           count(*) filter (where x.state = 'failing')::int as failing,
           count(*) filter (where x.state in ('waiting', 'restoring'))::int as waiting
      from assignment.rollout_node_state(r.id) x) s;
comment on view assignment.rollout_status is 'Each rollout: state, the wave out now of how many, nodes released, applied, failing, waiting, and why it halted or was aborted.';

create view assignment.rollout_nodes as
select r.id as rollout, x.node, x.wave, x.position, x.state, x.why, x.from_serial, x.newest_serial, x.released_at
  from assignment.rollout r cross join lateral assignment.rollout_node_state(r.id) x;
comment on view assignment.rollout_nodes is 'Each node of each rollout: its wave, canary order, held / waiting / applied / failing / restoring and why.';

-- The audit context records every rollout step (audit 0002).
grant trigger on assignment.rollout to mesh_audit;

/* The resources a recorded declaration carried, as JSON text, with their
   hash: what an abort declares again, and what a re-signing sends a node
   whose change is held (a new serial and expiry, nothing released). */
create function assignment.recorded_resources(node_names text[], serials bigint[])
returns table (node text, resources text, resources_hash bytea) language sql stable as $$
  select d.node, ((convert_from(d.envelope, 'utf8')::jsonb ->> 'body')::jsonb -> 'resources')::text, d.resources_hash
    from unnest(node_names, serials) w(node, serial)
    join assignment.declaration d on d.node = w.node and d.serial = w.serial
$$;
