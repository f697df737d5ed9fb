-- A promise (assignment 0070) is checked in the transaction of the change
-- that could break it: assignment hangs its deferred trigger on the hubs, and
-- reads which members are hubs to count them.
grant trigger on overlay.hub to mesh_assignment;
grant select on overlay.member to mesh_assignment;
