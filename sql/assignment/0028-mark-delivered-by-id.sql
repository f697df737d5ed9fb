-- mark_delivered finds its rows by primary key alone (issue 17, bench 3).
-- Why: 0008's `where id = any(ids) and delivered_at is null` let the planner
-- use the partial index outbox_owed (next_attempt_at, id) where delivered_at
-- is null, whose predicate that filter implies. Right after a declare --all
-- the outbox has no statistics for its 10,000 new rows, the partial index
-- looks small, and `id = any(ids)` on its second column scans the whole index
-- once an id: explain analyze of one batch of 1,000, 40,000 buffers and
-- 217-475 ms, against 12-16 ms by the primary key (10,000 owed rows, never
-- analyzed, PostgreSQL 15). Without that filter no partial index applies.
-- The same rows change the same way: a row already delivered keeps its
-- delivered_at (coalesce), and its last_error is already null (mark_failed
-- never touches a delivered row). The drain holds the rows it marks (take_owed
-- locked them), so none was delivered by another between its take and this.
create or replace function assignment.mark_delivered(ids bigint[]) returns void language sql as $$
  update assignment.outbox set delivered_at = coalesce(delivered_at, now()), last_error = null where id = any(ids)
$$;
comment on function assignment.mark_delivered(bigint[]) is 'The broker confirmed these rows: delivered now, or when first delivered if they already were (W1). Found by primary key alone.';
