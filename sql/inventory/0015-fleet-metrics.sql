-- The fleet as numbers, for `mesh serve`'s /metrics: the same view `mesh node
-- list` prints (node_status) and the same drift `mesh drift` prints, counted
-- here so the endpoint only copies rows into the Prometheus format and a DBA
-- sees exactly what is exported. Counts only: no row names a node, so a series
-- stays one series at 100,000 nodes (a per-node label would be 100,000).

/* One row a number: metric (the Prometheus name, without help: the endpoint
   declares each with its help), labels (a JSON object of label -> value, {}
   for none) and value. Every state is present, with 0 when no node is in it,
   so an alert on a count that fell to nothing still has a series to read. */
create function inventory.fleet_metrics()
returns table (metric text, labels jsonb, value double precision) language sql stable as $$
  with s as (
    select case when st.state = 'here' then 'here'
                when st.state = 'never spoken' then 'never_spoken'
                else 'out_of_touch' end as state,
           st.stale, coalesce(st.failing, 0) > 0 as failing
      from inventory.node_status st)
  select 'mesh_nodes', jsonb_build_object('state', k.state), (select count(*) from s where s.state = k.state)::float8
    from (values ('here'), ('out_of_touch'), ('never_spoken')) k(state)
  union all
  select 'mesh_nodes_stale', '{}', (select count(*) from s where s.stale)::float8
  union all
  select 'mesh_nodes_failing', '{}', (select count(*) from s where s.failing)::float8
  union all
  select 'mesh_drift_fighting_resources', '{}', (select count(*) from inventory.drift d where d.fighting)::float8
$$;
comment on function inventory.fleet_metrics() is 'The fleet counted for /metrics: nodes by state (here, out_of_touch, never_spoken), stale, failing, and resources fighting drift. No per-node rows.';
