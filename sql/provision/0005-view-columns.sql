-- What each column of the provision context's views means, so
-- docs/reference/sql.md (generated from these comments) answers without the
-- view's definition.

comment on column provision.grant_status.provision is 'What is provided.';
comment on column provision.grant_status.kind is 'postgres (a role and database per pair) or route (a name a reverse proxy serves).';
comment on column provision.grant_status.provider is 'The module that provides it.';
comment on column provision.grant_status.consumer is 'The module granted it.';
comment on column provision.grant_status.facts is 'The pair''s readable facts: {database, user} for postgres, {name, port} for a route.';
comment on column provision.grant_status.granted_at is 'When it was granted.';
comment on column provision.grant_status.holders is 'The nodes holding the pair''s credential: every node running either end.';
comment on column provision.grant_status.generation is 'The newest generation of its credential.';
comment on column provision.grant_status.settled is 'The newest generation every holder acknowledged.';
comment on column provision.grant_status.waiting_for is 'Holders that have not yet applied the newest generation: the provider accepts the previous one until none is left.';

comment on column provision.rotation.provision is 'What is provided.';
comment on column provision.rotation.consumer is 'The module granted it.';
comment on column provision.rotation.secret is 'The name of the pair''s credential in the secret context.';
comment on column provision.rotation.generation is 'Its newest generation.';
comment on column provision.rotation.holders is 'The nodes holding it.';
comment on column provision.rotation.settled is 'The newest generation every holder acknowledged.';
comment on column provision.rotation.waiting_for is 'Holders still to apply the newest generation.';

comment on column provision.stale_credentials.provision is 'What is provided.';
comment on column provision.stale_credentials.consumer is 'The module granted it.';
comment on column provision.stale_credentials.secret is 'The name of the pair''s credential.';
comment on column provision.stale_credentials.holders_without_copy is 'Holders with no current sealed copy: a new holder or a changed sealing key (mesh secret remake seals it again).';
