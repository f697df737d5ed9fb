-- Freshness (issue 20): a node's report says until when the declaration it
-- holds is valid, so node_status can say `stale` from SQL alone, the moment
-- that passes, whether or not the node can still reach the mesh to say so.
alter table inventory.report add column holds_until timestamptz;
comment on column inventory.report.holds_until is 'Until when the declaration the node reported holding is valid (its signed expiry); past it, the node is stale.';

drop function inventory.record_report(text, bigint, jsonb, jsonb);

/* The node's account of what it holds, kept as a backup (R2). */
create function inventory.record_report(node_name text, report_serial bigint, held_now jsonb, failed_now jsonb, holds_until_now timestamptz default null)
returns void language plpgsql as $$
begin
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null;
  if not found then
    raise exception 'no enrolled node %', node_name using errcode = 'MSH04';
  end if;
  -- A report resent after a lost link may arrive after a newer one: never go back.
  insert into inventory.report (node, serial, held, failed, holds_until) values (node_name, report_serial, held_now, failed_now, holds_until_now)
  on conflict (node) do update set serial = excluded.serial, held = excluded.held, failed = excluded.failed, holds_until = excluded.holds_until, reported_at = now()
    where excluded.serial >= inventory.report.serial;
end $$;

/* R4: the one answer to "which nodes are out of touch?", for `mesh node list`
   and for any DBA. A node says it is there once a minute; past 150 s without a
   word it is out of touch. "never spoken" is kept apart on purpose: that node
   never finished joining. Stale: the declaration it last said it holds has
   expired (its feed may be frozen, or the node has been away that long). */
create or replace view inventory.node_status as
select n.name,
       n.site,
       n.dialable,
       case when n.last_seen is null then 'never spoken'
            when now() - n.last_seen <= interval '150 seconds' then 'here'
            else 'out of touch ' || inventory.describe_age(now() - n.last_seen) end as state,
       n.last_seen,
       now() - n.last_seen as silent_for,
       n.enrolled_at,
       r.serial as reported_serial,
       case when r.node is null then null else jsonb_array_length(r.held) end as holds,
       case when r.node is null then null else jsonb_array_length(r.failed) end as failing,
       r.reported_at,
       now() - r.reported_at as report_age,
       coalesce(r.holds_until <= now(), false) as stale,
       r.holds_until
  from inventory.node n
  left join inventory.report r on r.node = n.name;
comment on view inventory.node_status is 'One row a node: here / out of touch Nm / never spoken, the age of its last report (R2, R4), and whether the declaration it holds has expired (stale).';
