-- A security-definer function runs with its owner's rights, and PostgreSQL
-- lets PUBLIC execute every new function. A view's readers need EXECUTE on
-- the functions it calls (they are checked against the reader, not the
-- view's owner), so this one is granted to the readers of the views that
-- call it (node_status, node_versions, path_end) and to no one else.
revoke execute on function inventory.delivered_declarations() from public;
grant execute on function inventory.delivered_declarations() to mesh_inventory_reader, mesh_assignment, mesh_assignment_reader;
