-- compose_each as in 0022, its members gathered as the text each resource is
-- printed as, beside its id, instead of as jsonb printed here (issue 17,
-- bench 3). Why: the overlay's interfaces now arrive as their jsonb text
-- (overlay 0010; a hub's is 0.98 MB, and building it as jsonb and printing it
-- was most of composing); every other member is printed here as before. The
-- composition is the same text: each member's text as jsonb prints it, joined
-- with ", " in the order of its id (checked by md5 of every node's
-- composition, old and new in one run, test/bench/3c-compose-stats).
create or replace function assignment.compose_each(node_names text[])
returns table (node text, resources text, resources_hash bytea, changed boolean)
language sql stable set jit = off set work_mem = '64MB' rows 1000 as $$
  with want as materialized (
    select e.name as node, e.enrolled_at from inventory.enrolled_node e
     where node_names is null or e.name in (select unnest(node_names))),
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
    select j.node, j.resource->>'id' as id, j.resource::text as resource from j
    union all select x.node, x.id, x.resource from overlay.interface_texts_of((select array_agg(node) from want)) x),
  c as (
    select w.node, w.enrolled_at, coalesce('[' || string_agg(r.resource, ', ' order by r.id) || ']', '[]') as resources
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
