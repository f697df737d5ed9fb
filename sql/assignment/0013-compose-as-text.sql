-- compose_each as in 0010, its resources gathered as the JSON text a
-- declaration carries rather than as a jsonb array printed afterwards. Why:
-- at 10,000 nodes (bench 3) the array was 27 MB built once as jsonb, printed
-- once for its sha256 and printed again for every caller (declare splices the
-- text into the signed body). The text is the same bytes: jsonb prints an
-- array as '[' || its elements printed || ']', separated by ', ' (checked by
-- md5 of every node's composition at bench 3's fleet, before and after).
-- resources is therefore text now; compose() still answers jsonb.
drop function assignment.compose_each(text[]);
create function assignment.compose_each(node_names text[])
returns table (node text, resources text, resources_hash bytea, changed boolean)
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
    select w.node, coalesce('[' || string_agg(r.resource::text, ', ' order by r.resource->>'id') || ']', '[]') as resources
      from want w left join r on r.node = w.node
     group by w.node)
  select c.node, c.resources, h.hash,
         h.hash is distinct from coalesce(
           (select d.resources_hash from assignment.declaration d where d.node = c.node order by d.serial desc limit 1),
           sha256(convert_to('[]'::jsonb::text, 'utf8')))
    from c cross join lateral (select sha256(convert_to(c.resources, 'utf8')) as hash) h
   order by c.node
$$;
comment on function assignment.compose_each(text[]) is 'What each node''s next declaration carries: resources (as the JSON text the declaration splices in), their sha256, and whether that differs from its newest declaration (never declared counts as declared empty). Null for every enrolled node.';

-- compose as in 0004, reading the text.
create or replace function assignment.compose(node_name text) returns jsonb language sql stable as $$
  select coalesce((select c.resources::jsonb from assignment.compose_each(array[node_name]) c), '[]'::jsonb)
$$;
