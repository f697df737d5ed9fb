-- The rollout's state names the agent package each node must run
-- (assignment.agent_targets): the console reads it as mesh_assignment_reader
-- (P1), SELECT only, on that view alone.
grant usage on schema catalogue to mesh_assignment_reader;
grant select on catalogue.agent_packages to mesh_assignment_reader;
