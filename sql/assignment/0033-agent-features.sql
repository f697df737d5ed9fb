-- What each agent version can apply (V1). A resource kind an agent does not
-- know makes it refuse the whole declaration as malformed, so the control
-- plane never sends one: agent_feature names the first mesh-host version that
-- applies each kind, and a node whose reported agent is older is declared
-- everything else and not that kind (held: it is composed again, and sent,
-- once the node reports a version that applies it). Assigning a module with
-- such a kind to such a node is refused (MSHV3): the operator learns it then,
-- not from a node that quietly lacks it. A node that has not reported its
-- version is declared everything, as before versions were reported.

create table assignment.agent_feature (
  kind          text primary key check (kind ~ '^[a-z][a-z0-9-]{0,19}$'),
  first_version text not null check (first_version ~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$')
);
comment on table assignment.agent_feature is 'Each resource kind, and the first mesh-host version that applies it: an older agent is declared nothing of that kind. A kind not listed goes to every agent.';
comment on column assignment.agent_feature.kind is 'A resource kind as a declaration names it (src/wire/resources.ts).';
comment on column assignment.agent_feature.first_version is 'The first agent version that applies it.';
insert into assignment.agent_feature (kind, first_version) values
  ('file', '0.1.0'), ('directory', '0.1.0'), ('service', '0.1.0'), ('container', '0.1.0'),
  ('wireguard', '0.1.0'), ('secret', '0.1.0'), ('firewall', '0.1.0'), ('brokers', '0.1.0');

/* The first agent version that applies a kind: set when a mesh-host release
   brings a new kind, before any declaration carries it. */
create function assignment.set_agent_feature(feature_kind text, version text) returns text language plpgsql as $$
begin
  if feature_kind is null or feature_kind !~ '^[a-z][a-z0-9-]{0,19}$'
     or version is null or version !~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$' then
    raise exception 'an agent feature is a resource kind and the first version that applies it, not % at %',
      coalesce(feature_kind, 'null'), coalesce(version, 'null')
      using errcode = 'MSHV4', hint = 'name a kind as declarations do (file, directory, service, ...) and a MAJOR.MINOR.PATCH version, such as 0.2.0';
  end if;
  insert into assignment.agent_feature (kind, first_version) values (feature_kind, version)
    on conflict (kind) do update set first_version = excluded.first_version;
  return version;
end $$;

/* Each node whose agent cannot apply a kind, and why: what compose_each holds
   back. Computed over the few versions the fleet runs, then spread to the
   nodes that run each. */
create view assignment.agent_holds as
with old as (
  select v.agent_version, f.kind, f.first_version
    from (select distinct agent_version from inventory.node_agent_version) v
    join assignment.agent_feature f
      on inventory.version_parts(v.agent_version) < inventory.version_parts(f.first_version))
select n.name as node, o.kind, n.agent_version, o.first_version
  from inventory.node_agent_version n join old o on o.agent_version = n.agent_version;
comment on view assignment.agent_holds is 'Each node and resource kind its reported agent is too old to apply: its declarations carry nothing of that kind until it reports a version that does (V1).';

/* As 0001, refusing a module with a kind the node's agent cannot apply. */
create or replace function assignment.assign(module_name text, node_name text) returns boolean language plpgsql as $$
declare
  h record;
begin
  if not exists (select 1 from catalogue.module_resources where name = module_name) then
    raise exception 'no module named %', module_name using errcode = 'MSH20', hint = 'add it first: mesh module add FILE';
  end if;
  if not exists (select 1 from inventory.enrolled_node where name = node_name) then
    raise exception 'no enrolled node named %', node_name using errcode = 'MSH21', hint = 'see mesh node list';
  end if;
  select a.kind, a.agent_version, a.first_version into h
    from assignment.agent_holds a
   where a.node = node_name
     and a.kind in (select e.value->>'kind' from catalogue.module_resources m
                      cross join lateral jsonb_array_elements(m.resources) e where m.name = module_name)
   order by a.kind limit 1;
  if found then
    raise exception 'module % has % resources, and node % runs mesh-host %, which applies them from %',
      module_name, h.kind, node_name, h.agent_version, h.first_version
      using errcode = 'MSHV3', hint = 'upgrade mesh-host on ' || node_name || ' first; mesh node list --outdated lists the nodes behind';
  end if;
  insert into assignment.assignment (module, node) values (module_name, node_name) on conflict do nothing;
  return found;
end $$;

/* compose_each as in 0025, holding back each resource of a kind the node's
   agent cannot apply (agent_holds). The hold is read once for the nodes
   composed: with every agent current it is empty, and costs one scan. */
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
    union all select w.node, b.resource from want w cross join brokers b),
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
