-- What each column of audit.log means, so docs/reference/sql.md (generated
-- from these comments) answers without the view's definition.

comment on column audit.log.seq is '1, 2, 3 ... with no gap: the order of the hash chain.';
comment on column audit.log.at is 'When: the time of the transaction that made the change.';
comment on column audit.log.kind is 'What happened (one of audit.kind, as mesh log --kind takes it).';
comment on column audit.log.node is 'The node it concerns, when one does.';
comment on column audit.log.actor is 'Who: the program and user that made the change (mesh token issue (alice)), else the database role.';
comment on column audit.log.role is 'The database role of the session that made the change.';
comment on column audit.log.detail is 'The facts of the change (serial, digest, fault and reason ...), never a secret.';
comment on column audit.log.what is 'detail as key=value pairs, as mesh log prints it.';
