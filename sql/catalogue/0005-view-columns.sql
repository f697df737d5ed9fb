-- What each column of the catalogue's views means, so docs/reference/sql.md
-- (generated from these comments) answers without the view's definition.
-- module_status's origin, behind and nodes were said where it was made.

comment on column catalogue.module_status.module is 'The module''s name.';
comment on column catalogue.module_status.version is 'Goes up each time its resources change; null until it exists.';
comment on column catalogue.module_status.built_commit is 'The commit its last successful build was made from.';
comment on column catalogue.module_status.digest is 'The manifest digest of its last built image; nodes run image@digest.';
comment on column catalogue.module_status.image is 'The repository its last build was pushed to: REGISTRY/MODULE.';
comment on column catalogue.module_status.built_at is 'When its last successful build was recorded.';
comment on column catalogue.module_status.source is 'The git repository it is built from; null for a module with no source.';
comment on column catalogue.module_status.source_ref is 'The branch or tag it follows.';
comment on column catalogue.module_status.source_head is 'The commit source_ref pointed at when last looked at.';
comment on column catalogue.module_status.head_seen_at is 'When source_head was seen.';

comment on column catalogue.build_status.id is 'The build request, also the correlation id of every message about it.';
comment on column catalogue.build_status.module is 'The module to build.';
comment on column catalogue.build_status.ref is 'What was asked for: a branch, a tag, a commit or HEAD.';
comment on column catalogue.build_status.state is 'requested, building, built or failed.';
comment on column catalogue.build_status.requested_at is 'When it was asked for.';
comment on column catalogue.build_status.ok is 'Built and pushed; false for a failure; null while unanswered.';
comment on column catalogue.build_status.builder is 'The builder whose answer was recorded.';
comment on column catalogue.build_status.commit_sha is 'The commit built.';
comment on column catalogue.build_status.image is 'The repository pushed to.';
comment on column catalogue.build_status.digest is 'The manifest digest pushed.';
comment on column catalogue.build_status.error is 'Why it failed, in one sentence.';
comment on column catalogue.build_status.log_tail is 'The end of the build''s output.';
comment on column catalogue.build_status.finished_at is 'When the answer was recorded.';
