-- provision reads which module runs where: the holders of a pair's credential
-- are the nodes running either end (provision.affected_holders, S5). provision
-- is migrated before assignment, so it reads the view at call time and needs
-- the select granted here, by name.
grant usage on schema assignment to mesh_provision;
grant select on assignment.placement to mesh_provision;
