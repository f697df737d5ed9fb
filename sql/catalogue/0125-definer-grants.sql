-- A security-definer function runs with its owner's rights, and PostgreSQL
-- lets PUBLIC execute every new function. A view's readers need EXECUTE on
-- the functions it calls (they are checked against the reader, not the
-- view's owner), so this one is granted to module_status's readers and to
-- no one else.
revoke execute on function catalogue.placements() from public;
grant execute on function catalogue.placements() to mesh_catalogue_reader;
