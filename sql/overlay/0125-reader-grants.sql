-- The overlay's reader (the console's) may read overlay.node_resources, each
-- node's WireGuard interface (addresses, peers' public keys, endpoints: no
-- secret), and PostgreSQL checks the function the view calls against the
-- reader: it is granted the function with the view.
grant execute on function overlay.node_resources_of(text[]) to mesh_overlay_reader;
