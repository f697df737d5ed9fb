-- Compose many nodes in one query. compose(node) ran once per node, and every
-- context's node_resources is computed whole and then filtered (the overlay
-- graph cannot be computed for one node alone), so declaring N nodes did N
-- whole-graph computations: 108 s for 1,000 nodes (BENCHMARKS.md). Now every
-- path composes through compose_each, and compose(node) is compose_each of one.

/* Every resource each named node must hold (all enrolled nodes when NODE_NAMES
   is null), ordered by id so the same truth always gives the same bytes; the
   hash of those bytes; and whether they differ from the node's newest
   declaration (what `mesh declare --changed` sends). */
create function assignment.compose_each(node_names text[])
returns table (node text, resources jsonb, resources_hash bytea, changed boolean)
language sql stable set jit = off rows 1000 as $$
  with want as materialized (
    select e.name as node from inventory.enrolled_node e
     where node_names is null or e.name = any(node_names)),
  r as (
    select a.node, e.value as resource
      from assignment.assignment a
      join want w on w.node = a.node
      join catalogue.module_resources m on m.name = a.module
      cross join lateral jsonb_array_elements(m.resources) e
    union all select x.node, x.resource from overlay.node_resources x join want w on w.node = x.node
    union all select x.node, x.resource from secret.node_resources x join want w on w.node = x.node
    union all select x.node, x.resource from provision.node_resources x join want w on w.node = x.node),
  c as (
    select w.node, coalesce(jsonb_agg(r.resource order by r.resource->>'id') filter (where r.resource is not null), '[]'::jsonb) as resources
      from want w left join r on r.node = w.node
     group by w.node)
  select c.node, c.resources, h.hash,
         h.hash is distinct from (select d.resources_hash from assignment.declaration d where d.node = c.node order by d.serial desc limit 1)
    from c cross join lateral (select sha256(convert_to(c.resources::text, 'utf8')) as hash) h
   order by c.node
$$;
comment on function assignment.compose_each(text[]) is 'What each node''s next declaration carries: resources, their sha256, and whether that differs from its newest declaration. Null for every enrolled node.';

/* One node's resources, through the same path (plan reads this); an empty
   list for a name that is not enrolled. */
create or replace function assignment.compose(node_name text) returns jsonb language sql stable as $$
  select coalesce((select c.resources from assignment.compose_each(array[node_name]) c), '[]'::jsonb)
$$;

/* Declares take turns, mesh-wide. A declaration composed from an older truth
   must never carry a higher serial than one composed from a newer truth, or a
   node ends on the older (a rotation's secret, a peer's key). Taken first in
   declare's transaction: every later statement there (read committed) sees
   what was committed before the turn began, and the serials it takes are
   higher than any declare before it. One declare of 10,000 nodes holds the
   turn for seconds; the next one waits, it does not fail. */
create function assignment.take_declare_turn() returns void language sql as $$
  select pg_advisory_xact_lock(hashtext('mesh assignment declare'))
$$;
