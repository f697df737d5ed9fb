-- compose_each as in 0013, with "changed" measured against the newest
-- declaration of the node's current enrolment only. Why: a retired name
-- enrolled again (a machine rebuilt) composes what it had before, byte for
-- byte; compared with the declarations of its former life it was "unchanged",
-- so the fresh machine was never declared at all. Declarations issued before
-- enrolled_at belong to a machine that no longer exists.
create or replace function assignment.compose_each(node_names text[])
returns table (node text, resources text, resources_hash bytea, changed boolean)
language sql stable set jit = off rows 1000 as $$
  with want as materialized (
    select e.name as node, e.enrolled_at from inventory.enrolled_node e
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

-- plan_changes as in 0016, on the same footing: what a rebuilt machine runs
-- is nothing until it acknowledges a declaration of its own enrolment.
create or replace function assignment.plan_changes(node_names text[] default null)
returns table (node text, id text, change text) language sql stable set jit = off as $$
  with nxt as materialized (select c.node, c.resources::jsonb as resources from assignment.compose_each(node_names) c),
  applied as materialized (
    -- The newest declaration each node acknowledged since it enrolled: what it runs now.
    select distinct on (d.node) d.node, ((convert_from(d.envelope, 'utf8')::jsonb->>'body')::jsonb)->'resources' as resources
      from assignment.declaration d
      join inventory.enrolled_node e on e.name = d.node and d.issued_at >= e.enrolled_at
     where d.acknowledged_at is not null and d.node in (select n.node from nxt n)
     order by d.node, d.serial desc),
  nr as (select n.node, e.value as r from nxt n cross join lateral jsonb_array_elements(n.resources) e),
  lr as (select a.node, e.value as r from applied a cross join lateral jsonb_array_elements(a.resources) e),
  diff as materialized (
    select coalesce(nr.node, lr.node) as node, coalesce(nr.r->>'id', lr.r->>'id') as id,
           case when lr.r is null then 'added' when nr.r is null then 'removed' else 'changed' end as change,
           coalesce(nr.r, lr.r)->>'path' as path
      from nr full join lr on lr.node = nr.node and lr.r->>'id' = nr.r->>'id'
     where nr.r is distinct from lr.r),
  -- What a restartOn may name: a changed resource's id, or a changed file's path.
  touched as (
    select d.node, array_agg(d.id) || coalesce(array_agg(d.path) filter (where d.path is not null), '{}') as keys
      from diff d group by d.node),
  restarts as (
    select nr.node, nr.r->>'id' as id, 'restarts' as change
      from nr join touched t on t.node = nr.node
     where jsonb_typeof(nr.r->'restartOn') = 'array' and (nr.r->'restartOn') ?| t.keys
       -- Added or changed itself: it starts or restarts as that, not because of another.
       and not exists (select 1 from diff d where d.node = nr.node and d.id = nr.r->>'id'))
  select d.node, d.id, d.change from diff d
  union all select r.node, r.id, r.change from restarts r
  order by 1, 2, 3
$$;
comment on function assignment.plan_changes(text[]) is 'Every change the next declaration brings each node against the one it last acknowledged since it enrolled: added, changed, removed, and the services that restart because of them. Null for every enrolled node.';
