-- Agent upgrades (V2): assignment refuses to declare an agent version the
-- control plane would not speak with, by the one skew rule kept here.
grant select on inventory.agent_skew to mesh_assignment;
