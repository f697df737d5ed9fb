-- The console's own role (P1): mesh_overlay_reader, made by
-- create_contexts.sql, reads every table and view of this context, and
-- those later migrations make (they run as this context's owner, whose
-- defaults these are), and writes nothing.
grant usage on schema overlay to mesh_overlay_reader;
grant select on all tables in schema overlay to mesh_overlay_reader;
alter default privileges in schema overlay grant select on tables to mesh_overlay_reader;

/* overlay.peering is the peer graph this function computes, as this
   context (security definer): reading the view calls it. */
grant execute on function overlay.peers() to mesh_overlay_reader;
