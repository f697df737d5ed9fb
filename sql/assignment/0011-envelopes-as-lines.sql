-- record_declarations as in 0008 (the declaration and the outbox row in one
-- statement, NOTIFY at commit), its envelopes passed as one text, one
-- envelope a line. An envelope is JSON text, which never holds a raw newline.
-- Why: a text[] parameter of 10,000 envelopes (27 MB at bench 3's fleet) is
-- escaped element by element by the client and parsed element by element
-- here, over a second; one text split here is a tenth of that. A count that
-- does not match leaves rows with a null node or envelope: refused, not
-- recorded (not null).
drop function assignment.record_declarations(text[], bigint[], text[], text[], text[]);
create function assignment.record_declarations(nodes text[], serials bigint[], digests text[], hashes text[], envelope_lines text)
returns integer language plpgsql as $$
declare
  n integer;
  envelopes text[] := string_to_array(envelope_lines, E'\n');
begin
  insert into assignment.declaration (node, serial, digest, resources_hash, envelope)
  select u.n, u.s, decode(u.d, 'hex'), decode(u.h, 'hex'), convert_to(u.e, 'utf8')
    from unnest(nodes, serials, digests, hashes, envelopes) as u(n, s, d, h, e);
  get diagnostics n = row_count;
  insert into assignment.outbox (node, kind, serial, payload)
  select u.n, 'declaration', u.s, convert_to(u.e, 'utf8')
    from unnest(nodes, serials, envelopes) as u(n, s, e);
  perform pg_notify('mesh_outbox', '');
  return n;
end $$;
comment on function assignment.record_declarations(text[], bigint[], text[], text[], text) is 'Record a batch of declarations (digests and hashes in hex, envelopes one JSON text a line) and owe each to its node in the outbox (W1).';
