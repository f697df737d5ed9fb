-- What each column of the assignment context's views means, so
-- docs/reference/sql.md (generated from these comments) answers without the
-- view's definition.

comment on column assignment.declaration_status.node is 'The node it was declared to.';
comment on column assignment.declaration_status.serial is 'Its serial; only goes forward per node.';
comment on column assignment.declaration_status.digest is 'sha256 of its signed body, hex.';
comment on column assignment.declaration_status.issued_at is 'When it was composed and signed.';
comment on column assignment.declaration_status.acknowledged_at is 'When the node reported it applied.';
comment on column assignment.declaration_status.superseded_at is 'When the node reported it skipped for a newer one.';
comment on column assignment.declaration_status.state is 'applied, superseded, or sent (no answer yet).';

comment on column assignment.declaration_freshness.node is 'An enrolled node.';
comment on column assignment.declaration_freshness.serial is 'Its newest declaration.';
comment on column assignment.declaration_freshness.signed_at is 'When it was signed.';
comment on column assignment.declaration_freshness.expires_at is 'Until when it holds; serve signs it again at half its lifetime.';
comment on column assignment.declaration_freshness.expired is 'True once expires_at passed: a host refuses it on arrival and reports it holds a stale one.';

comment on column assignment.pending_delivery.node is 'Whom it is owed to.';
comment on column assignment.pending_delivery.kind is 'The message type.';
comment on column assignment.pending_delivery.serial is 'The declaration serial it carries.';
comment on column assignment.pending_delivery.owed_since is 'When it became owed.';
comment on column assignment.pending_delivery.attempts is 'Publishes tried and not confirmed by the broker.';
comment on column assignment.pending_delivery.last_error is 'Why the last attempt failed.';
comment on column assignment.pending_delivery.next_attempt_at is 'Not tried again before this.';

comment on column assignment.rollout_status.id is 'The rollout.';
comment on column assignment.rollout_status.state is 'holding, rolling, paused, halted, done, aborted or released.';
comment on column assignment.rollout_status.wave is 'The wave out now (1-based); 0 before the start.';
comment on column assignment.rollout_status.waves_given is 'How many waves were given.';
comment on column assignment.rollout_status.waves is 'How many waves its nodes fall into.';
comment on column assignment.rollout_status.wave_list is 'The waves as given (1, 10%, 100%).';
comment on column assignment.rollout_status.wait_healthy is 'How long a wave may take to report applied before the rollout halts.';
comment on column assignment.rollout_status.max_failing is 'How many released nodes may fail before it halts.';
comment on column assignment.rollout_status.first is 'Canaries pinned by the operator, in order.';
comment on column assignment.rollout_status.nodes is 'How many nodes it changes.';
comment on column assignment.rollout_status.released is 'How many were released.';
comment on column assignment.rollout_status.applied is 'How many applied their new declaration.';
comment on column assignment.rollout_status.failing is 'How many failed to apply it, or refused it.';
comment on column assignment.rollout_status.waiting is 'How many were released and have not answered yet, or are owed their old declaration again.';
comment on column assignment.rollout_status.reason is 'Why it halted or was aborted, naming the nodes.';
comment on column assignment.rollout_status.held_at is 'When changes began to be held.';
comment on column assignment.rollout_status.started_at is 'When its first wave went out.';
comment on column assignment.rollout_status.wave_started is 'When the wave out now went out (or was resumed).';
comment on column assignment.rollout_status.ended_at is 'When it ended.';

comment on column assignment.rollout_nodes.rollout is 'The rollout.';
comment on column assignment.rollout_nodes.node is 'A node it changes.';
comment on column assignment.rollout_nodes.wave is 'Its wave.';
comment on column assignment.rollout_nodes."position" is 'Its place in the order: canaries first, then a stable shuffle.';
comment on column assignment.rollout_nodes.state is 'held, waiting, applied, failing, or restoring (owed its old declaration after an abort).';
comment on column assignment.rollout_nodes.why is 'The state in a sentence, naming the serial or the failure.';
comment on column assignment.rollout_nodes.from_serial is 'The serial it held when the rollout started.';
comment on column assignment.rollout_nodes.newest_serial is 'Its newest declaration now.';
comment on column assignment.rollout_nodes.released_at is 'When its wave released it.';
