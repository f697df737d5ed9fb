-- The audit context (migrated last) keeps every declaration issued (node,
-- serial, digest) by a trigger of its own on assignment.declaration; creating
-- a trigger on a table needs TRIGGER on it, granted here by name.
grant usage on schema assignment to mesh_audit;
grant trigger on assignment.declaration to mesh_audit;
