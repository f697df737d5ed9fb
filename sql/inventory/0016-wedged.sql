-- A wedged agent: a node that is here (its heard keeps coming: the link is
-- up) but whose applied serial lags the newest declaration the broker
-- confirmed onto its queue, past a threshold. Heards say the process and its
-- link live, not that it makes progress; a host whose apply loop is stuck
-- would read `here` for ever. node_status now says `wedged` for it.
--
-- The lag is timed from the later of the delivery and the node's return: a
-- node away for an hour had its declaration delivered an hour ago, and it
-- applies within seconds of coming back, so it must not read wedged in
-- between. here_since (when the node last came back from silence) is kept by
-- a trigger on last_seen, so every path that moves last_seen keeps it.
--
-- What was delivered lives in assignment, whose migrations run after these:
-- a view here cannot name its objects. delivered_declarations() reads
-- assignment.delivered_newest (granted to this context by assignment 0030) when
-- it is called, the way `mesh node list` reads pending_delivery at call time.

alter table inventory.node add column here_since timestamptz;
comment on column inventory.node.here_since is 'When the node was last heard after 150 s of silence (or first): how long it has been here without a break.';
update inventory.node set here_since = last_seen;

create function inventory.keep_here_since() returns trigger language plpgsql as $$
begin
  if new.last_seen is not null and (old.last_seen is null or new.last_seen - old.last_seen > interval '150 seconds') then
    new.here_since := new.last_seen;
  end if;
  return new;
end $$;
create trigger node_here_since before update of last_seen on inventory.node
  for each row execute function inventory.keep_here_since();

create table inventory.wedge_setting (
  one           boolean primary key default true check (one),
  after_seconds integer not null default 300 check (after_seconds > 0)
);
comment on table inventory.wedge_setting is 'One row: how long a node that is here may leave a delivered declaration unapplied before it reads wedged.';
comment on column inventory.wedge_setting.one is 'There is exactly one row.';
comment on column inventory.wedge_setting.after_seconds is 'Seconds a delivered declaration may wait on a node that is here, counted from the later of the delivery and its return.';
insert into inventory.wedge_setting default values;

/* How long a declaration may wait on a node that is here before it reads wedged. */
create function inventory.set_wedged_after(seconds integer) returns integer language sql as $$
  update inventory.wedge_setting set after_seconds = seconds returning after_seconds
$$;

/* The newest declaration the broker confirmed onto each node's queue, and
   when. plpgsql, so the name is bound when called (after assignment's
   migrations), not when this file runs; security definer, so whoever may
   read node_status reads it with this context's grant. */
create function inventory.delivered_declarations()
returns table (node text, serial bigint, delivered_at timestamptz)
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return query select d.node, d.serial, d.delivered_at from assignment.delivered_newest d;
end $$;

create or replace view inventory.node_status as
select n.name,
       n.site,
       n.dialable,
       case when n.last_seen is null then 'never spoken'
            when now() - n.last_seen <= interval '150 seconds'
                 and d.serial > greatest(coalesce(r.serial, 0), coalesce(f.serial, 0), coalesce(x.serial, 0))
                 and greatest(d.delivered_at, n.here_since) <= now() - make_interval(secs => (select w.after_seconds from inventory.wedge_setting w)) then 'wedged'
            when now() - n.last_seen <= interval '150 seconds' then 'here'
            else 'out of touch ' || inventory.describe_age(now() - n.last_seen) end as state,
       n.last_seen,
       now() - n.last_seen as silent_for,
       n.enrolled_at,
       r.serial as reported_serial,
       case when r.node is null then null else jsonb_array_length(r.held) end as holds,
       case when r.node is null and f.node is null then null else coalesce(jsonb_array_length(f.failed), 0) end as failing,
       r.reported_at,
       now() - r.reported_at as report_age,
       coalesce(r.holds_until <= now(), false) as stale,
       r.holds_until,
       d.serial as delivered_serial
  from inventory.node n
  left join inventory.report r on r.node = n.name
  left join inventory.apply_failure f on f.node = n.name
  left join inventory.refusal x on x.node = n.name
  left join inventory.delivered_declarations() d on d.node = n.name;
comment on view inventory.node_status is 'One row a node: here / wedged / out of touch Nm / never spoken, the age of its last report (R2, R4), how many resources its last apply could not finish (failing), whether the declaration it holds has expired (stale), and the newest declaration delivered to its queue. Wedged: here, but a delivered declaration has waited unapplied (not reported applied, failed or refused) longer than wedge_setting allows.';

/* As 0013, with wedged among the states. jit off: counting a small table's
   rows is never worth seconds of compiling, which the planner's guess at an
   unanalyzed fleet can ask for (as compose_each, assignment 0010). */
create or replace function inventory.fleet_metrics()
returns table (metric text, labels jsonb, value double precision) language sql stable set jit = off as $$
  with s as (
    select case when st.state in ('here', 'wedged') then st.state
                when st.state = 'never spoken' then 'never_spoken'
                else 'out_of_touch' end as state,
           st.stale, coalesce(st.failing, 0) > 0 as failing
      from inventory.node_status st)
  select 'mesh_nodes', jsonb_build_object('state', k.state), (select count(*) from s where s.state = k.state)::float8
    from (values ('here'), ('wedged'), ('out_of_touch'), ('never_spoken')) k(state)
  union all
  select 'mesh_nodes_stale', '{}', (select count(*) from s where s.stale)::float8
  union all
  select 'mesh_nodes_failing', '{}', (select count(*) from s where s.failing)::float8
  union all
  select 'mesh_drift_fighting_resources', '{}', (select count(*) from inventory.drift d where d.fighting)::float8
$$;
