-- A promise (assignment 0070) is checked in the transaction of the change
-- that could break it: assignment hangs its deferred trigger on the grants,
-- whose consumers a provider's firewall admits.
grant trigger on provision.grant to mesh_assignment;
