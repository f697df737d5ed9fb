-- The audit context (migrated last) keeps every secret created and every new
-- generation (a rotation, a remake, an accepted value again) by a trigger of
-- its own on secret.secret; creating a trigger needs TRIGGER on the table.
grant usage on schema secret to mesh_audit;
grant trigger on secret.secret to mesh_audit;
