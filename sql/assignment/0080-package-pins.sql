-- The package a node must run at a version or above: what a rollout of an
-- advisory's fix declares (mesh advisories rollout). A pin is a row, composed
-- into the node's declaration as a `package` resource, which the host applies
-- with apt. mesh-host applies the kind from the release that brought it; an
-- older agent is declared nothing of it (agent_feature, V1).

insert into assignment.agent_feature (kind, first_version) values ('package', '0.1.0');

create table assignment.package_pin (
  node      text not null,
  name      text not null check (name ~ '^[a-z0-9][a-z0-9+.-]{0,127}$'),
  version   text not null check (inventory.debian_version_key(version) is not null),
  advisory  text,
  pinned_at timestamptz not null default now(),
  primary key (node, name)
);
comment on table assignment.package_pin is 'A Debian package a node must run at a version or above, declared to it as a package resource.';
comment on column assignment.package_pin.node is 'The node.';
comment on column assignment.package_pin.name is 'The binary package.';
comment on column assignment.package_pin.version is 'The lowest version it may run: the host installs it when below.';
comment on column assignment.package_pin.advisory is 'The advisory whose fix it is, when a rollout of one pinned it.';
comment on column assignment.package_pin.pinned_at is 'When it was pinned or raised.';

/* Pin every node an advisory lists to the version that fixes it: the rows of
   inventory.advisory_node, and no other node. A pin already higher stays.
   Refused when the advisory is not loaded (MSHO4) or lists no node with a
   fix to declare (MSHO5): a rollout of nothing would look like a fix. */
create function assignment.pin_advisory(advisory_id text)
returns table (node text, name text, version text) language plpgsql as $$
#variable_conflict use_column
begin
  if not exists (select 1 from inventory.advisory a where a.id = advisory_id) then
    raise exception 'no advisory % is loaded', coalesce(advisory_id, 'null')
      using errcode = 'MSHO4', hint = 'load it first: mesh advisories load FILE';
  end if;
  return query
  with fix as (
    select distinct on (a.node, a.name) a.node, a.name, a.fixed
      from inventory.advisory_node a
     where a.advisory = advisory_id and a.fixed is not null
     order by a.node, a.name, inventory.debian_version_key(a.fixed) desc),
  pinned as (
    insert into assignment.package_pin as p (node, name, version, advisory)
    select f.node, f.name, f.fixed, advisory_id from fix f
    on conflict (node, name) do update set version = excluded.version, advisory = excluded.advisory, pinned_at = now()
      where inventory.compare_debian_version(excluded.version, p.version) > 0
    returning p.node, p.name, p.version)
  select f.node, f.name, f.fixed from fix f order by f.node, f.name;
  if not found then
    raise exception 'advisory % lists no node running an affected version with a fix to declare', advisory_id
      using errcode = 'MSHO5', hint = 'mesh advisories lists the nodes each advisory affects; an advisory naming no fixed version has nothing to roll out';
  end if;
end $$;

/* compose_each as in 0033, with each package a node is pinned to. */
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
      from assignment.agent_targets() t join want w on w.node = t.node
    union all select p.node, jsonb_build_object('id', 'package:' || p.name, 'kind', 'package', 'name', p.name, 'version', p.version)
      from assignment.package_pin p join want w on w.node = p.node),
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
