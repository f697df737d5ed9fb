-- Composition at fleet size (bench 3, 10,000 nodes). Both functions as
-- before (firewalls as in 0007, compose_each as in 0008, the same bytes for
-- every node), with two changes of plan only:
-- - a list of names is a semi-join (`in (select unnest(...))`), not
--   `= any(array)`, which compares every row with every name: 10,000 x
--   10,000 when declare names every node, about a second each;
-- - the firewall rules are gathered for every wanted node in one group by,
--   not one scan of every opening per node.

/* Each named node's firewall resource (every enrolled node when null): the
   whole inet mesh table, rules sorted so one truth is one set of bytes. */
create or replace function assignment.firewalls(node_names text[])
returns table (node text, resource jsonb) language sql stable set jit = off rows 1000 as $$
  with want as materialized (
    select e.name as node from inventory.enrolled_node e
     where node_names is null or e.name in (select unnest(node_names))),
  o as (
    select o.node, jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
             'proto', o.proto, 'port', o.port,
             'to', case when o.port_to is distinct from o.port then o.port_to end,
             'from', to_jsonb(o.sources), 'via', o.via, 'why', o.why))
           order by o.proto, o.port, o.why, o.sources::text) as rules
      from assignment.firewall_opening o join want w on w.node = o.node
     where o.sources is null or cardinality(o.sources) > 0
     group by o.node)
  select w.node, jsonb_build_object('id', 'firewall:mesh', 'kind', 'firewall', 'name', 'mesh', 'rules', coalesce(o.rules, '[]'::jsonb))
    from want w left join o on o.node = w.node
$$;

create or replace function assignment.compose_each(node_names text[])
returns table (node text, resources jsonb, resources_hash bytea, changed boolean)
language sql stable set jit = off rows 1000 as $$
  with want as materialized (
    select e.name as node from inventory.enrolled_node e
     where node_names is null or e.name in (select unnest(node_names))),
  r as (
    select a.node, e.value as resource
      from assignment.assignment a
      join want w on w.node = a.node
      join catalogue.module_resources m on m.name = a.module
      cross join lateral jsonb_array_elements(m.resources) e
     where e.value->>'kind' is distinct from 'opening'
    union all select x.node, x.resource from overlay.node_resources x join want w on w.node = x.node
    union all select x.node, x.resource from secret.node_resources x join want w on w.node = x.node
    union all select x.node, x.resource from provision.node_resources x join want w on w.node = x.node
    union all select f.node, f.resource from assignment.firewalls((select array_agg(node) from want)) f),
  c as (
    select w.node, coalesce(jsonb_agg(r.resource order by r.resource->>'id') filter (where r.resource is not null), '[]'::jsonb) as resources
      from want w left join r on r.node = w.node
     group by w.node)
  select c.node, c.resources, h.hash,
         h.hash is distinct from coalesce(
           (select d.resources_hash from assignment.declaration d where d.node = c.node order by d.serial desc limit 1),
           sha256(convert_to('[]'::jsonb::text, 'utf8')))
    from c cross join lateral (select sha256(convert_to(c.resources::text, 'utf8')) as hash) h
   order by c.node
$$;
comment on function assignment.compose_each(text[]) is 'What each node''s next declaration carries: resources, their sha256, and whether that differs from its newest declaration (never declared counts as declared empty). Null for every enrolled node.';
