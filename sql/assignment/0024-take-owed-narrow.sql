-- take_owed picks its rows before it reads their envelopes (issue 17, bench 3).
-- Why: as 0012 wrote it, one statement joined every owed row to its
-- declaration and then sorted by id to keep LIMIT_ROWS: with 10,000 owed
-- (declare --all) each batch of 500 fetched and sorted all 10,000 envelopes
-- (explain analyze: 10 MB external merge sort, 30,000 buffers, 45 ms a batch,
-- the next batch the same less 500). Here the owed rows are chosen, ordered
-- and locked on the outbox alone (a few dozen bytes a row), and only those
-- are joined to their declarations. Same rows, same order, same locks (skip
-- locked: drains never share a row; only outbox rows are locked).
create or replace function assignment.take_owed(limit_rows integer, due_by timestamptz) returns table (id bigint, node text, kind text, serial bigint, payload bytea)
language sql as $$
  with owed as (
    select o.id, o.node, o.kind, o.serial from assignment.outbox o
     where o.delivered_at is null and o.next_attempt_at <= due_by
     order by o.id limit limit_rows
     for update skip locked)
  select w.id, w.node, w.kind, w.serial, d.envelope
    from owed w join assignment.declaration d on d.node = w.node and d.serial = w.serial
   order by w.id
$$;
comment on function assignment.take_owed(integer, timestamptz) is 'Up to LIMIT_ROWS owed rows due by DUE_BY, locked until the caller''s transaction ends (skip locked: drains never share a row), each with the envelope of the declaration it owes.';
