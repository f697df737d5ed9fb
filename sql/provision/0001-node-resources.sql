-- provision: what this context adds to each node's declaration. Assignment composes
-- every declaration from these views (sql/assignment), one per context, so
-- a context contributes by redefining its own view and nothing else.
create view provision.node_resources as
select null::text as node, null::jsonb as resource where false;
comment on view provision.node_resources is 'One row per resource this context declares on a node; empty until the context has something to say.';
grant usage on schema provision to mesh_assignment;
grant select on provision.node_resources to mesh_assignment;
