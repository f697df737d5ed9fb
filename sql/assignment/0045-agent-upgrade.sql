-- Agent upgrades as declared state (V2). The operator adds a mesh-host
-- package (catalogue.add_agent_package) and says which version the fleet, or
-- one node, must run (set_agent_target); every node's declaration then
-- carries one more resource, kind agent, naming that version and the sha256
-- and size of its package. The signature over the declaration is what makes
-- the bytes trustworthy: the host fetches them over the broker, checks the
-- sha256, installs, and restarts into the new agent. Like any change it is
-- held by an open rollout and released wave by wave; the wave gate
-- (rollout_node_state below) passes a node only once its reports name the
-- declared version, so an old agent that acknowledged the declaration and a
-- new one that never came up both keep the wave waiting, and a node that
-- went back to its previous package reports the agent resource failing,
-- which halts the rollout.

create table assignment.agent_target (
  node    text primary key check (node = '' or node ~ '^[a-z][a-z0-9-]{0,62}$'),
  version text not null,
  set_at  timestamptz not null default now()
);
comment on table assignment.agent_target is 'Which mesh-host version nodes must run: the row with node '''' for every node, a row naming a node for that node alone (a pin). No row: nodes are declared no agent and run what they were installed with.';
comment on column assignment.agent_target.node is 'The node pinned, or '''' for the whole fleet.';
comment on column assignment.agent_target.version is 'A version of catalogue.agent_packages.';
comment on column assignment.agent_target.set_at is 'When it was said.';

insert into assignment.agent_feature (kind, first_version) values ('agent', '0.1.0') on conflict (kind) do nothing;

/* Each enrolled node with a target, and the package it must run: its pin,
   else the fleet's. */
create function assignment.agent_targets() returns table (node text, version text, sha256 text, size bigint)
language sql stable as $$
  select e.name, p.version, p.sha256, p.size
    from inventory.enrolled_node e
    cross join lateral (select t.version from assignment.agent_target t
                         where t.node = e.name or t.node = '' order by t.node = '' limit 1) t
    join catalogue.agent_packages p on p.version = t.version
$$;

/* Say which version every node (NODE_NAME null) or one node must run. The
   version must have a package, and be one the control plane speaks with by
   the skew rule (inventory.agent_skew): an upgrade that leaves the fleet
   outside it would be one the control plane then refuses to talk to. A
   fleet-wide version clears every pin: it is the whole truth. */
create function assignment.set_agent_target(target_version text, node_name text) returns text language plpgsql as $$
declare k inventory.agent_skew; c integer[]; a integer[];
begin
  if not exists (select 1 from catalogue.agent_packages p where p.version = target_version) then
    raise exception 'no mesh-host package of version % was added', coalesce(target_version, 'null')
      using errcode = 'MSHZ1', hint = 'add it first: mesh agent add mesh-host_VERSION_ARCH.deb; mesh agent list shows those added';
  end if;
  select * into k from inventory.agent_skew;
  c := inventory.version_parts(k.control_version);
  a := inventory.version_parts(target_version);
  if c is null or not (a[1] = c[1] and a[2] <= c[2] and a[2] >= c[2] - k.minors_behind) then
    raise exception 'mesh-host % is outside the skew rule: the control plane % speaks with %', target_version,
      coalesce(k.control_version, 'of no stated version'),
      case when c is null then 'nothing until mesh serve states its version'
           else format('%s.%s to %s.%s', c[1], greatest(c[2] - k.minors_behind, 0), c[1], c[2]) end
      using errcode = 'MSHZ2', hint = 'upgrade the control plane first (its version bounds the agents it speaks with), or pick a version within the rule';
  end if;
  if node_name is null then
    delete from assignment.agent_target;
    insert into assignment.agent_target (node, version) values ('', target_version);
  else
    if not exists (select 1 from inventory.enrolled_node where name = node_name) then
      raise exception 'no enrolled node named %', node_name using errcode = 'MSH21', hint = 'see mesh node list';
    end if;
    insert into assignment.agent_target (node, version) values (node_name, target_version)
      on conflict (node) do update set version = excluded.version, set_at = now();
  end if;
  return target_version;
end $$;

/* compose_each as in 0033, with the agent each node must run (agent_targets)
   as one more resource, held back like any kind from an agent too old to
   apply it. */
create or replace function assignment.compose_each(node_names text[])
returns table (node text, resources text, resources_hash bytea, changed boolean)
language sql stable set jit = off set work_mem = '64MB' rows 1000 as $$
  with want as materialized (
    select e.name as node, e.enrolled_at from inventory.enrolled_node e
     where node_names is null or e.name in (select unnest(node_names))),
  held as materialized (
    select h.node, h.kind from assignment.agent_holds h join want w on w.node = h.node),
  -- One list for every node, or no row at all while inventory.broker is empty (0020).
  brokers as materialized (
    select jsonb_build_object('id', 'brokers', 'kind', 'brokers', 'brokers',
             jsonb_agg(jsonb_build_object('address', k.address, 'fingerprint', k.fingerprint) order by k.address)) as resource
      from inventory.broker_nodes k having count(*) > 0),
  j as (
    select a.node, e.value as resource
      from assignment.assignment a
      join want w on w.node = a.node
      join catalogue.module_resources m on m.name = a.module
      cross join lateral jsonb_array_elements(m.resources) e
     where e.value->>'kind' is distinct from 'opening'
    union all select x.node, x.resource from secret.node_resources x join want w on w.node = x.node
    union all select x.node, x.resource from provision.node_resources x join want w on w.node = x.node
    union all select f.node, f.resource from assignment.firewalls((select array_agg(node) from want)) f
    union all select w.node, b.resource from want w cross join brokers b
    union all select t.node, jsonb_build_object('id', 'agent', 'kind', 'agent', 'version', t.version,
                                                'sha256', t.sha256, 'size', t.size)
      from assignment.agent_targets() t join want w on w.node = t.node),
  r as (
    select j.node, j.resource->>'id' as id, j.resource->>'kind' as kind, j.resource::text as resource from j
    union all select x.node, x.id, split_part(x.id, ':', 1), x.resource
      from overlay.interface_texts_of((select array_agg(node) from want)) x),
  kept as (
    select r.node, r.id, r.resource from r
     where not exists (select 1 from held h where h.node = r.node and h.kind = r.kind)),
  c as (
    select w.node, w.enrolled_at, coalesce('[' || string_agg(k.resource, ', ' order by k.id) || ']', '[]') as resources
      from want w left join kept k on k.node = w.node
     group by w.node, w.enrolled_at)
  select c.node, c.resources, h.hash,
         h.hash is distinct from coalesce(
           (select d.resources_hash from assignment.declaration d
             where d.node = c.node and d.issued_at >= c.enrolled_at
             order by d.serial desc limit 1),
           sha256(convert_to('[]'::jsonb::text, 'utf8')))
    from c cross join lateral (select sha256(convert_to(c.resources, 'utf8')) as hash) h
   order by c.node
$$;
/* rollout_node_state as in 0017, with the agent gate (V2): a node whose
   declared agent version differs from the one its reports name has not
   applied yet, whatever it acknowledged. The old agent acknowledges the
   declaration that names the new one before it restarts into it; only the
   new agent's own report lets the wave pass. */
create or replace function assignment.rollout_node_state(rollout_id bigint)
returns table (node text, wave integer, "position" integer, from_serial bigint, newest_serial bigint, released_at timestamptz, state text, why text)
language sql stable as $$
  select n.node, n.wave, n.position, n.from_serial, s.serial, n.released_at,
         case when n.released_at is null then 'held'
              when n.restore_owed then 'restoring'
              when f.fresh or x.fresh then 'failing'
              when n.nothing_owed or (s.serial > n.from_serial and d.acknowledged_at is not null
                                      and (t.version is null or v.agent_version is not distinct from t.version)) then 'applied'
              else 'waiting' end,
         case when n.released_at is null then 'not yet released'
              when n.restore_owed then format('owed declaration %s again (the rollout was aborted)', n.from_serial)
              when f.node is not null and (f.fresh or not coalesce(x.fresh, false)) then format('declaration %s could not apply %s%s', f.serial,
                     (select string_agg(e->>'id' || ': ' || (e->>'error'), '; ') from jsonb_array_elements(f.failed) e),
                     case when f.fresh then '' else ' (before the resume: waiting for a clean report)' end)
              when x.node is not null then format('refused declaration %s: %s: %s%s', x.serial, x.fault, x.reason,
                     case when x.fresh then '' else ' (before the resume: waiting for a clean report)' end)
              when n.nothing_owed then 'nothing to apply: its composition no longer differed'
              when s.serial > n.from_serial and d.acknowledged_at is not null
                   and (t.version is null or v.agent_version is not distinct from t.version) then format('applied declaration %s', s.serial)
              when s.serial > n.from_serial and d.acknowledged_at is not null
                then format('applied declaration %s; its agent reports %s, not yet %s', s.serial, coalesce(v.agent_version, 'no version'), t.version)
              when s.serial = n.from_serial then 'released, not yet declared'
              else format('declaration %s not yet reported applied', s.serial) end
    from assignment.rollout_node n
    join assignment.rollout r on r.id = n.rollout
    join assignment.node_serial s on s.node = n.node
    join inventory.enrolled_node e on e.name = n.node  -- a node retired mid-rollout is out of it
    left join assignment.declaration d on d.node = n.node and d.serial = s.serial
    left join assignment.agent_targets() t on t.node = n.node
    left join inventory.node_agent_version v on v.name = n.node
    -- A failure counts against the newest declaration only, and only if told since the last resume.
    left join lateral (select f.*, f.reported_at >= coalesce(r.resumed_at, '-infinity') as fresh from inventory.apply_failure f
                        where f.node = n.node and f.serial >= s.serial and s.serial > n.from_serial) f on true
    left join lateral (select x.*, x.refused_at >= coalesce(r.resumed_at, '-infinity') as fresh from inventory.refusal x
                        where x.node = n.node and x.serial >= s.serial and s.serial > n.from_serial and x.refused_at >= n.released_at) x on true
   where n.rollout = rollout_id
$$;

