-- The console reads the rollout's state and asks why a path is blocked as
-- mesh_assignment_reader (P1); the functions behind both read, beside
-- assignment's own tables, what inventory grants assignment itself: which
-- nodes are enrolled, their failures and refusals, the agent version each
-- reports, the skew rule and the ends of a path. SELECT only, on exactly those.
grant usage on schema inventory to mesh_assignment_reader;
grant select on inventory.enrolled_node, inventory.apply_failure, inventory.refusal, inventory.broker_nodes,
  inventory.node_agent_version, inventory.agent_skew, inventory.path_end to mesh_assignment_reader;
