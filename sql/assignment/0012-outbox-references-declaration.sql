-- Each envelope stored once (issue 17, bench 3): an outbox row no longer
-- carries a copy of its payload but names the declaration it owes, (node,
-- serial), and the drain reads the envelope from assignment.declaration by
-- that key. Why: every declare wrote each envelope twice (27 MB twice at a
-- 10,000-node fleet) and every mark_delivered rewrote a row holding a copy.
-- The outbox carries one kind, 'declaration' (its check since 0008): sealed
-- secrets, rotations and a recover's answer all travel inside declarations,
-- so every row has its declaration and none needs a payload of its own. A
-- future kind without a declaration row adds its own column then, with a
-- check that exactly one of the two is set.

-- Every row so far was written beside its declaration by record_declarations.
alter table assignment.outbox
  add constraint outbox_declaration foreign key (node, serial) references assignment.declaration (node, serial);
alter table assignment.outbox drop column payload;
comment on column assignment.outbox.serial is 'The declaration it owes, with node: its envelope is assignment.declaration''s, published as stored (hosts drop what is not newer, so a re-send is harmless).';

-- record_declarations as in 0011, the outbox row naming its declaration.
create or replace function assignment.record_declarations(nodes text[], serials bigint[], digests text[], hashes text[], envelope_lines text)
returns integer language plpgsql as $$
declare
  n integer;
  envelopes text[] := string_to_array(envelope_lines, E'\n');
begin
  insert into assignment.declaration (node, serial, digest, resources_hash, envelope)
  select u.n, u.s, decode(u.d, 'hex'), decode(u.h, 'hex'), convert_to(u.e, 'utf8')
    from unnest(nodes, serials, digests, hashes, envelopes) as u(n, s, d, h, e);
  get diagnostics n = row_count;
  insert into assignment.outbox (node, kind, serial)
  select u.n, 'declaration', u.s
    from unnest(nodes, serials) as u(n, s);
  perform pg_notify('mesh_outbox', '');
  return n;
end $$;
comment on function assignment.record_declarations(text[], bigint[], text[], text[], text) is 'Record a batch of declarations (digests and hashes in hex, envelopes one JSON text a line) and owe each to its node in the outbox (W1).';

/* take_owed as in 0008, the payload read from the row's declaration. Only the
   outbox rows are locked (of o): a declaration row stays free for the heard
   that acknowledges it while its delivery is in flight. */
create or replace function assignment.take_owed(limit_rows integer, due_by timestamptz) returns table (id bigint, node text, kind text, serial bigint, payload bytea)
language sql as $$
  select o.id, o.node, o.kind, o.serial, d.envelope from assignment.outbox o
    join assignment.declaration d on d.node = o.node and d.serial = o.serial
   where o.delivered_at is null and o.next_attempt_at <= due_by
   order by o.id limit limit_rows
   for update of o skip locked
$$;
comment on function assignment.take_owed(integer, timestamptz) is 'Up to LIMIT_ROWS owed rows due by DUE_BY, locked until the caller''s transaction ends (skip locked: drains never share a row), each with the envelope of the declaration it owes.';
