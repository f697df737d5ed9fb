-- The console's promises page reads assignment.promise_state as
-- mesh_assignment_reader (P1), as `mesh promise list` reads it. The view's
-- predicate, broken_promises, reads beyond this context (the firewall's
-- openings, the overlay's members and peers, the catalogue's modules, the
-- enrolled nodes): it runs as this context (security definer), as the change
-- check already runs it, so the reader is granted nothing of what it reads,
-- only the answer. Every name in it is qualified.
alter function assignment.broken_promises() security definer set search_path = pg_catalog, pg_temp;
revoke execute on function assignment.broken_promises() from public;
grant execute on function assignment.broken_promises() to mesh_assignment_reader;
