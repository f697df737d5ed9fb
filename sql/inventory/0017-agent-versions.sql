-- Agent versions (V1). Every report a mesh-host sends names the version of
-- the agent that sent it; the node keeps the newest one said. The control
-- plane states its own version when mesh serve starts, and the skew rule says
-- which agent versions it speaks with: the same major, and a minor no newer
-- than its own and no more than minors_behind older (1: the current minor and
-- the one before). agent_versions judges every node by that rule where a DBA
-- reads it; `mesh node list --outdated` prints the nodes it calls outdated.
--
-- A version is MAJOR.MINOR.PATCH, optionally followed by -PRERELEASE (kept
-- as said, compared by its three numbers only).

alter table inventory.node add column agent_version text
  constraint node_agent_version_form check (agent_version ~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$');
alter table inventory.node add column agent_version_at timestamptz;
comment on column inventory.node.agent_version is 'The mesh-host version the node''s newest report named; null until a report names one (agents before versions were reported name none).';
comment on column inventory.node.agent_version_at is 'When the node first reported the version it runs now.';

/* A version's three numbers, for comparing: '0.10.2' -> {0,10,2}; int[]
   compares element by element, so 0.10 > 0.9. */
create function inventory.version_parts(version text) returns integer[] language sql immutable strict as $$
  select string_to_array(split_part(version, '-', 1), '.')::integer[]
$$;

create table inventory.agent_skew (
  one             boolean primary key default true check (one),
  control_version text check (control_version ~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$'),
  stated_at       timestamptz,
  minors_behind   integer not null default 1 check (minors_behind between 0 and 100)
);
comment on table inventory.agent_skew is 'One row: the skew rule. The control plane speaks with agents of its own major whose minor is its own or up to minors_behind before it.';
comment on column inventory.agent_skew.one is 'There is exactly one row.';
comment on column inventory.agent_skew.control_version is 'The version of the control plane, as mesh serve states it when it starts; null until one has.';
comment on column inventory.agent_skew.stated_at is 'When it was last stated.';
comment on column inventory.agent_skew.minors_behind is 'How many minors before its own the control plane still speaks with (1: the current minor and the one before).';
insert into inventory.agent_skew default values;

/* The control plane's version, stated by mesh serve at start. */
create function inventory.state_control_version(version text) returns text language plpgsql as $$
begin
  if version is null or version !~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$' then
    raise exception 'the control plane''s version % is not MAJOR.MINOR.PATCH', coalesce(version, 'null')
      using errcode = 'MSHV0', hint = 'state the version package.json names, as mesh serve does';
  end if;
  update inventory.agent_skew set control_version = version, stated_at = now();
  return version;
end $$;

/* How many minors before the control plane's own it still speaks with. */
create function inventory.set_agent_skew(minors integer) returns integer language plpgsql as $$
begin
  if minors is null or minors < 0 or minors > 100 then
    raise exception 'the skew rule cannot reach % minors back', coalesce(minors::text, 'null')
      using errcode = 'MSHV2', hint = 'give 0 (the current minor only) to 100; 1 speaks with the current minor and the one before';
  end if;
  update inventory.agent_skew set minors_behind = minors;
  return minors;
end $$;

/* The version a node's report named. Called in the report's transaction, for
   every report (an applied one, a failure, a refusal): a refusing agent is
   the one most worth knowing the version of. Writes only when it changed: the
   report path is the busiest write. True when a version the node had already
   reported changed (an upgrade or a downgrade): what it may be declared
   changes with it, so serve declares again (a first version changes nothing:
   a node that named none was held nothing). */
create function inventory.record_agent_version(node_name text, version text) returns boolean language plpgsql as $$
declare
  was text;
begin
  if version is null or version !~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$' then
    raise exception 'node % reported agent version %, which is not MAJOR.MINOR.PATCH', node_name, coalesce(version, 'null')
      using errcode = 'MSHV1', hint = 'the mesh-host sends the version package.json names; a hand-built agent must too';
  end if;
  select n.agent_version into was from inventory.node n where n.name = node_name;
  if not found or was is not distinct from version then
    return false;
  end if;
  update inventory.node set agent_version = version, agent_version_at = now() where name = node_name;
  return was is not null;
end $$;

/* Every node judged by the skew rule. speaks: its agent is of a version the
   control plane speaks with (null while either version is unknown). behind:
   older than the control plane, even within the rule. outdated: outside the
   rule, behind, or silent about its version though it has reported (an agent
   older than version reports). why says which, in words. */
create view inventory.agent_versions as
with k as (
  select s.control_version, s.minors_behind, inventory.version_parts(s.control_version) as c from inventory.agent_skew s),
v as (
  select n.name, n.agent_version, n.agent_version_at, k.control_version, k.minors_behind, k.c,
         inventory.version_parts(n.agent_version) as a,
         exists (select 1 from inventory.report r where r.node = n.name)
           or exists (select 1 from inventory.apply_failure f where f.node = n.name)
           or exists (select 1 from inventory.refusal x where x.node = n.name) as has_reported
    from inventory.node n cross join k),
j as (
  select v.*,
         case when v.a is null or v.c is null then null
              else v.a[1] = v.c[1] and v.a[2] <= v.c[2] and v.a[2] >= v.c[2] - v.minors_behind end as speaks,
         case when v.a is null or v.c is null then null else v.a < v.c end as behind
    from v)
select j.name, j.agent_version, j.agent_version_at, j.control_version, j.speaks, j.behind,
       coalesce(not j.speaks or j.behind, j.agent_version is null and j.has_reported) as outdated,
       case when j.agent_version is null and j.has_reported then 'reports no version: its agent is older than version reports'
            when j.agent_version is null then 'has not reported yet'
            when j.control_version is null then 'no control plane has stated its version (mesh serve does as it starts)'
            when not j.speaks then format('outside the skew rule: the control plane %s speaks with %s.%s to %s.%s',
                                          j.control_version, j.c[1], greatest(j.c[2] - j.minors_behind, 0), j.c[1], j.c[2])
            when j.behind then format('behind the control plane %s', j.control_version)
            else 'current' end as why
  from j;
comment on view inventory.agent_versions is 'One row a node: the agent version it reported, the control plane''s, whether the skew rule lets them speak (speaks), whether the agent is older (behind), and outdated (outside the rule, behind, or reporting no version). mesh node list --outdated prints the outdated rows.';

/* As 0016, with the agent version each node reported. */
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
       d.serial as delivered_serial,
       n.agent_version
  from inventory.node n
  left join inventory.report r on r.node = n.name
  left join inventory.apply_failure f on f.node = n.name
  left join inventory.refusal x on x.node = n.name
  left join inventory.delivered_declarations() d on d.node = n.name;
comment on view inventory.node_status is 'One row a node: here / wedged / out of touch Nm / never spoken, the age of its last report (R2, R4), how many resources its last apply could not finish (failing), whether the declaration it holds has expired (stale), the newest declaration delivered to its queue, and the agent version it reported. Wedged: here, but a delivered declaration has waited unapplied (not reported applied, failed or refused) longer than wedge_setting allows.';

/* What assignment reads to hold back what an agent cannot apply: a node's
   reported version, nothing else of it. */
create view inventory.node_agent_version as
  select n.name, n.agent_version from inventory.node n where n.agent_version is not null;
comment on view inventory.node_agent_version is 'Each node whose reports named its agent''s version, and that version: what assignment reads to declare a node only what its agent applies.';
grant select on inventory.node_agent_version to mesh_assignment;

/* As 0016, with nodes by agent version (unknown for none reported) and the
   outdated count. The version label is bounded by the versions in the fleet,
   never by its nodes. */
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
  union all
  (select 'mesh_nodes_by_agent_version', jsonb_build_object('version', coalesce(n.agent_version, 'unknown')), count(*)::float8
     from inventory.node n group by coalesce(n.agent_version, 'unknown'))
  union all
  select 'mesh_nodes_outdated', '{}', (select count(*) from inventory.agent_versions a where a.outdated)::float8
$$;
