-- The console's own role (P1): mesh_assignment_reader, made by
-- create_contexts.sql, reads every table and view of this context, and
-- those later migrations make (they run as this context's owner, whose
-- defaults these are), and writes nothing. The inventory reader reads the
-- view this context grants inventory, as `mesh node list` does.
grant usage on schema assignment to mesh_assignment_reader, mesh_inventory_reader;
grant select on all tables in schema assignment to mesh_assignment_reader;
alter default privileges in schema assignment grant select on tables to mesh_assignment_reader;
grant select on assignment.pending_delivery to mesh_inventory_reader;

/* How many held nodes a release would change: what `mesh rollout status`
   and the console's rollouts page say while a hold is open. Security
   definer: composing reads the other contexts' views granted to this
   context, which its reader is not. */
create function assignment.count_held_changes() returns integer
language sql stable security definer set search_path = pg_catalog, pg_temp as $$
  select count(*)::int from assignment.compose_each(null) c join assignment.held_nodes() h on h.node = c.node where c.changed
$$;
revoke execute on function assignment.count_held_changes() from public;
grant execute on function assignment.count_held_changes() to mesh_assignment_reader;
comment on function assignment.count_held_changes() is 'The held nodes whose composition changed, that a release would declare.';

/* What a node's next declaration carries, by id and kind only: the
   console's node page. Security definer for the same reason; the
   resources themselves (sealed secrets among them) stay out of the
   reader's hands. */
create function assignment.composition_of(node_name text) returns table (id text, kind text)
language sql stable security definer set search_path = pg_catalog, pg_temp as $$
  select e.value->>'id', e.value->>'kind'
    from jsonb_array_elements(coalesce(assignment.compose(node_name), '[]'::jsonb)) with ordinality e
   order by e.ordinality
$$;
revoke execute on function assignment.composition_of(text) from public;
grant execute on function assignment.composition_of(text) to mesh_assignment_reader;
comment on function assignment.composition_of(text) is 'The resources a node''s next declaration carries, by id and kind: what the console shows of them.';

/* rollout_status and rollout_nodes, which the console's rollouts page
   reads, judge each node from inventory's failures and refusals: as this
   context, whose grant that is, so a reader of the views needs none on
   inventory. Every name in it is qualified. */
alter function assignment.rollout_node_state(bigint) security definer set search_path = pg_catalog, pg_temp;
