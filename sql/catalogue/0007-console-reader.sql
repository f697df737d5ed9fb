-- The console's own role (P1): mesh_catalogue_reader, made by
-- create_contexts.sql, reads every table and view of this context, and
-- those later migrations make (they run as this context's owner, whose
-- defaults these are), and writes nothing.
grant usage on schema catalogue to mesh_catalogue_reader;
grant select on all tables in schema catalogue to mesh_catalogue_reader;
alter default privileges in schema catalogue grant select on tables to mesh_catalogue_reader;
