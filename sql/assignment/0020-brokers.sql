-- compose_each as in 0019, with one resource more on every node: the brokers
-- it may dial, each with the fingerprint it pins (inventory.broker_nodes,
-- ordered by address), so a broker added or removed, or a broker node's
-- certificate changed, is a change of every composition (W2) and is declared
-- like any other. While inventory.broker is empty no node carries it: the
-- home's broker in each identity is the whole list, and an existing mesh's
-- compositions stay byte for byte what they were.
create or replace function assignment.compose_each(node_names text[])
returns table (node text, resources text, resources_hash bytea, changed boolean)
language sql stable set jit = off rows 1000 as $$
  with want as materialized (
    select e.name as node, e.enrolled_at from inventory.enrolled_node e
     where node_names is null or e.name in (select unnest(node_names))),
  -- One list for every node, or no row at all while inventory.broker is empty.
  brokers as materialized (
    select jsonb_build_object('id', 'brokers', 'kind', 'brokers', 'brokers',
             jsonb_agg(jsonb_build_object('address', k.address, 'fingerprint', k.fingerprint) order by k.address)) as resource
      from inventory.broker_nodes k having count(*) > 0),
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
    union all select f.node, f.resource from assignment.firewalls((select array_agg(node) from want)) f
    union all select w.node, b.resource from want w cross join brokers b),
  c as (
    select w.node, w.enrolled_at, coalesce('[' || string_agg(r.resource::text, ', ' order by r.resource->>'id') || ']', '[]') as resources
      from want w left join r on r.node = w.node
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
comment on function assignment.compose_each(text[]) is 'What each node''s next declaration carries: resources (as the JSON text the declaration splices in), their sha256, and whether that differs from its newest declaration since it enrolled (never declared in this enrolment counts as declared empty). Null for every enrolled node.';
