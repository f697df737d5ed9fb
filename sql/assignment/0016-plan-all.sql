-- `mesh plan --all` (issue 20.1): for every node whose next declaration
-- differs from the one it last said it applied, what changes, and which
-- services will restart because of it (restartOn, D4), computed here from
-- the one composing path. A node never acknowledged compares with nothing:
-- everything it is to hold is added.

/* One row a change: NODE's resource ID is added, changed, removed, or restarts. */
create function assignment.plan_changes(node_names text[] default null)
returns table (node text, id text, change text) language sql stable set jit = off as $$
  with nxt as materialized (select c.node, c.resources::jsonb as resources from assignment.compose_each(node_names) c),
  applied as materialized (
    -- The newest declaration each node acknowledged: what it runs now.
    select distinct on (d.node) d.node, ((convert_from(d.envelope, 'utf8')::jsonb->>'body')::jsonb)->'resources' as resources
      from assignment.declaration d
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
comment on function assignment.plan_changes(text[]) is 'Every change the next declaration brings each node against the one it last acknowledged: added, changed, removed, and the services that restart because of them. Null for every enrolled node.';

/* The same, grouped: nodes with the very same changes read as one line. */
create function assignment.plan_summary(node_names text[] default null)
returns table (nodes bigint, changes text[], sample text[]) language sql stable as $$
  with per as (
    select p.node, array_agg(p.id || ' ' || p.change order by p.id, p.change) as changes
      from assignment.plan_changes(node_names) p group by p.node)
  select count(*), per.changes, (array_agg(per.node order by per.node))[1:5]
    from per group by per.changes
   order by count(*) desc, per.changes
$$;
comment on function assignment.plan_summary(text[]) is 'plan_changes grouped by the exact list of changes: how many nodes, which changes, up to five of the nodes.';
