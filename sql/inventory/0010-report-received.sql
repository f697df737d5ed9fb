-- Several serves (issue 19.3): a report is handled once however often it is
-- delivered. A serve killed after its commit and before its ack has the
-- report redelivered, to itself or another serve; the last report is an
-- upsert that never goes back and would survive that, but corrections are
-- counted (drift) and refusals kept and audited, and those must not count
-- one report twice. The broker's message id is the report's identity.
create table inventory.report_received (
  message_id text primary key,
  node text not null references inventory.node (name) on delete cascade,
  serial bigint,
  received_at timestamptz not null default now()
);
comment on table inventory.report_received is 'Each report message recorded, by its broker message id: a redelivery is recognised and recorded no second time. A node''s rows older than a day are removed as it reports.';
comment on column inventory.report_received.message_id is 'The message id the host published the report with (host/agent.ts).';
comment on column inventory.report_received.node is 'The node whose report it was.';
comment on column inventory.report_received.serial is 'The declaration the report was about (null for a report of nothing applied yet).';
comment on column inventory.report_received.received_at is 'When it was first recorded.';
create index report_received_node_age on inventory.report_received (node, received_at);

/* True the first time a message id is seen, false on every redelivery. Called
   in the transaction that records the report, so "seen" and "recorded" commit
   together: a crash between them leaves neither. A day is far longer than any
   redelivery waits (a serve's restart, a broker's), and keeps the table to a
   day of reports. */
create function inventory.receive_report(node_name text, report_message_id text, report_serial bigint)
returns boolean language plpgsql as $$
begin
  insert into inventory.report_received (message_id, node, serial) values (report_message_id, node_name, report_serial)
  on conflict (message_id) do nothing;
  if not found then return false; end if;
  delete from inventory.report_received where node = node_name and received_at < now() - interval '1 day';
  return true;
end $$;
