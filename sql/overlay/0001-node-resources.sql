-- overlay: what this context adds to each node's declaration. Assignment composes
-- every declaration from these views (sql/assignment), one per context, so
-- a context contributes by redefining its own view and nothing else.
create view overlay.node_resources as
select null::text as node, null::jsonb as resource where false;
comment on view overlay.node_resources is 'One row per resource this context declares on a node; empty until the context has something to say.';
grant usage on schema overlay to mesh_assignment;
grant select on overlay.node_resources to mesh_assignment;
