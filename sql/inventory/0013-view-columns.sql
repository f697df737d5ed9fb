-- What each column of the views an operator or DBA reads first means, so
-- docs/reference/sql.md (generated from these comments) answers without the
-- view's definition. The view comments themselves are where each view is made.

comment on column inventory.node_status.name is 'The node''s name: also its broker account and queue.';
comment on column inventory.node_status.site is 'Where it is; nodes at one site may reach each other directly.';
comment on column inventory.node_status.dialable is 'host:port others dial for its overlay; null behind NAT.';
comment on column inventory.node_status.state is 'here (heard within 150 s), out of touch Nm (silent that long), or never spoken: what mesh node list prints.';
comment on column inventory.node_status.last_seen is 'When anything was last heard from it: a heard, a report or a refusal.';
comment on column inventory.node_status.silent_for is 'How long since last_seen; null if never spoken.';
comment on column inventory.node_status.enrolled_at is 'When its token was spent; null while a token is issued and not yet spent.';
comment on column inventory.node_status.reported_serial is 'The declaration serial its last report said it applied; null if it never reported.';
comment on column inventory.node_status.holds is 'How many resources its last report said it holds; null if it never reported (0 is a report of nothing held).';
comment on column inventory.node_status.failing is 'How many resources its last apply could not finish; 0 when the last apply was clean, null if it never reported.';
comment on column inventory.node_status.reported_at is 'When its last report was recorded.';
comment on column inventory.node_status.report_age is 'How old its last report is.';
comment on column inventory.node_status.stale is 'True when the declaration it holds has expired (it reports holds_until): the node keeps it applied but the control plane has not re-signed it in time.';
comment on column inventory.node_status.holds_until is 'Until when the declaration it holds was signed to hold.';

comment on column inventory.drift.node is 'The node whose host put the resource back.';
comment on column inventory.drift.resource is 'The resource put back, as kind:name (file:/etc/app.conf, service:app).';
comment on column inventory.drift.last_hour is 'How often in the last hour.';
comment on column inventory.drift.times is 'How often in all.';
comment on column inventory.drift.last_at is 'When it was last put back.';
comment on column inventory.drift.fighting is 'Put back more than fighting_after times in the last hour: something on the machine keeps changing it.';
comment on column inventory.drift.fighting_after is 'The setting (mesh drift fighting-after N, default 3).';

comment on column inventory.broker_nodes.address is 'HOST:PORT nodes dial (TLS).';
comment on column inventory.broker_nodes.fingerprint is 'The SHA-256 fingerprint of its certificate, which every node pins.';
comment on column inventory.broker_nodes.node is 'The mesh node running it; null for a broker outside the mesh.';
