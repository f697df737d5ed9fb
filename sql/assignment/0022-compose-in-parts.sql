-- compose_each as in 0020 (0019 with the brokers every node may dial), with
-- two changes that keep every byte (checked by
-- md5 of every node's composition at bench 3's fleet, old and new in one run):
-- - the overlay's part is read for the nodes wanted only (overlay 0008), so
--   composing the fleet in parts (src/assignment/compose_parts.ts) does not
--   build the whole peer graph's interfaces in every part;
-- - work_mem 64MB for the call: 10,000 compositions are 27 MB of text, sorted
--   and grouped by node; under the default 4 MB every sort spilled to disk
--   (external merge, 25 MB, twice) and the unanalysed tables' estimates split
--   hashes into 128 batches. Composing 10,000 went from 2.0-2.4 s to 1.4-1.5 s
--   (bench 3's fleet, same run). Memory is per sort, for this call only.
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
  r as (
    select a.node, e.value as resource
      from assignment.assignment a
      join want w on w.node = a.node
      join catalogue.module_resources m on m.name = a.module
      cross join lateral jsonb_array_elements(m.resources) e
     where e.value->>'kind' is distinct from 'opening'
    union all select x.node, x.resource from overlay.node_resources_of((select array_agg(node) from want)) x
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
