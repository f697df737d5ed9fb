-- What the control plane owes and how its changes move, as numbers for `mesh
-- serve`'s /metrics: the same views `mesh outbox`, `mesh rollout status` and
-- the declarations' freshness read, counted here so the endpoint only copies
-- rows and a DBA sees exactly what is exported. No row names a node.

/* One row a number: metric (the Prometheus name), labels (a JSON object, {}
   for none), value. Every rollout state is present with 0 when none is in it,
   so "a rollout halted" is an alert on mesh_rollouts{state="halted"} > 0.
   Ages are in seconds, 0 when there is nothing to be old. */
create function assignment.fleet_metrics()
returns table (metric text, labels jsonb, value double precision) language sql stable as $$
  with owed as (
    select count(*)::float8 as n,
           coalesce(extract(epoch from now() - min(p.owed_since)), 0)::float8 as oldest,
           coalesce(sum(p.attempts), 0)::float8 as attempts
      from assignment.pending_delivery p),
  open as (
    select r.wave, r.applied, r.failing, r.waiting from assignment.rollout_status r
     where r.state in ('holding', 'rolling', 'paused', 'halted')),
  fresh as (
    select count(*) filter (where f.expired)::float8 as expired,
           coalesce(extract(epoch from now() - min(f.signed_at)), 0)::float8 as oldest
      from assignment.declaration_freshness f)
  select 'mesh_outbox_owed_rows', '{}'::jsonb, owed.n from owed
  union all
  select 'mesh_outbox_oldest_owed_seconds', '{}', owed.oldest from owed
  union all
  select 'mesh_outbox_owed_attempts', '{}', owed.attempts from owed
  union all
  select 'mesh_rollouts', jsonb_build_object('state', k.state),
         (select count(*) from assignment.rollout r where r.state = k.state)::float8
    from (values ('holding'), ('rolling'), ('paused'), ('halted'), ('done'), ('aborted'), ('released')) k(state)
  union all
  select 'mesh_rollout_wave', '{}', coalesce((select open.wave from open), 0)::float8
  union all
  select 'mesh_rollout_nodes', jsonb_build_object('state', k.state),
         coalesce((select case k.state when 'applied' then open.applied when 'failing' then open.failing
                                       else open.waiting end from open), 0)::float8
    from (values ('applied'), ('failing'), ('waiting')) k(state)
  union all
  select 'mesh_declarations_expired', '{}', fresh.expired from fresh
  union all
  select 'mesh_declaration_oldest_age_seconds', '{}', fresh.oldest from fresh
$$;
comment on function assignment.fleet_metrics() is 'The outbox (owed rows, oldest age, attempts), rollouts by state and the open one''s wave and nodes, and the declarations'' age and expiry, counted for /metrics. No per-node rows.';
