-- The dialable nodes of a site, found without reading the fleet: composing a
-- few spokes asks for the dialable nodes of their sites (each is a peer of
-- every spoke of its site, O1), which at 100,000 nodes was a scan of every
-- node. Few nodes are dialable, so the index is small and rarely written.
create index node_dialable_site on inventory.node (site) where dialable is not null;
