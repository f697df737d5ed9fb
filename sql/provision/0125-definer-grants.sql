-- A security-definer function runs with its owner's rights, and PostgreSQL
-- lets PUBLIC execute every new function. A view's readers need EXECUTE on
-- the functions it calls (they are checked against the reader, not the
-- view's owner): these are read by provision's own role, which owns them,
-- and by assignment through provision.node_resources (compose).
revoke execute on function provision.acknowledged_generation(text, text) from public;
revoke execute on function provision.settlement(text[]) from public;
grant execute on function provision.settlement(text[]) to mesh_assignment;
