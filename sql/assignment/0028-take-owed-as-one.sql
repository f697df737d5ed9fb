-- take_owed hands a batch back as one row (issue 17, bench 3): the ids,
-- nodes, kinds and serials as arrays, each envelope's size in bytes, and
-- the envelopes one after another as one text value, which the drain cuts by
-- those sizes. Why: as one result row per owed row (0024), each of the
-- drain's 1,000 rows a batch was its own DataRow for PostgreSQL to form and
-- serve's Node to parse into an object and a string, then encode again into
-- the bytes it publishes; as one value the batch is read, decoded and encoded
-- once (bench 3f-drain-split: the steps of a batch apart, both ways in turns).
-- The same rows as 0024, picked the same way (ordered by id, skip locked,
-- only the outbox rows locked), and every array in the same order, each
-- aggregate reading the same input rows in turn. No row owed, no row back.
drop function assignment.take_owed(integer, timestamptz);
create function assignment.take_owed(limit_rows integer, due_by timestamptz)
returns table (ids bigint[], nodes text[], kinds text[], serials bigint[], sizes integer[], envelopes text)
language sql as $$
  with owed as (
    select o.id, o.node, o.kind, o.serial from assignment.outbox o
     where o.delivered_at is null and o.next_attempt_at <= due_by
     order by o.id limit limit_rows
     for update skip locked),
  taken as (
    select w.id, w.node, w.kind, w.serial, d.envelope
      from owed w join assignment.declaration d on d.node = w.node and d.serial = w.serial
     order by w.id)
  -- octet_length of a stored bytea reads its size from the TOAST header, without decompressing it.
  select array_agg(t.id), array_agg(t.node), array_agg(t.kind), array_agg(t.serial),
         array_agg(octet_length(t.envelope)), string_agg(convert_from(t.envelope, 'UTF8'), '')
    from taken t
  having count(*) > 0
$$;
comment on function assignment.take_owed(integer, timestamptz) is 'Up to LIMIT_ROWS owed rows due by DUE_BY as one row (none when nothing is owed), locked until the caller''s transaction ends (skip locked: drains never share a row): their ids, nodes, kinds and serials in one order, and the envelope of the declaration each owes, one after another (SIZES in bytes cut them).';
