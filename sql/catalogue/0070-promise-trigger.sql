-- A promise (assignment 0070) is checked in the transaction of the change
-- that could break it: assignment hangs its deferred trigger on the modules,
-- whose openings and services promises speak of.
grant trigger on catalogue.module to mesh_assignment;
