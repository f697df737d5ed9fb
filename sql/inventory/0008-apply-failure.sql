-- A partly failed apply is a fact (rollouts halt on it, the console shows it),
-- but not an account of what the machine holds: it is kept apart from
-- inventory.report (R2's backup copy), a row a node, and a later clean report
-- of that serial or a newer one clears it.

create table inventory.apply_failure (
  node        text primary key references inventory.node (name) on delete cascade,
  serial      bigint not null,
  failed      jsonb not null check (jsonb_typeof(failed) = 'array' and jsonb_array_length(failed) > 0),
  reported_at timestamptz not null default now()
);
comment on table inventory.apply_failure is 'The last apply each node said it could not finish: which resources failed and why. Cleared by a clean report of that serial or newer.';
comment on column inventory.apply_failure.node is 'The node.';
comment on column inventory.apply_failure.serial is 'The declaration it was applying.';
comment on column inventory.apply_failure.failed is 'The resources it could not apply: [{id, error}].';
comment on column inventory.apply_failure.reported_at is 'When the report saying so arrived.';

/* A host could not apply all of declaration SERIAL: last_seen moves, the
   failure is kept, the last report is untouched. Never goes back to an older
   serial. False for a node that is not enrolled. */
create function inventory.record_failure(node_name text, failed_serial bigint, failed_now jsonb)
returns boolean language plpgsql as $$
begin
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null;
  if not found then return false; end if;
  insert into inventory.apply_failure (node, serial, failed) values (node_name, failed_serial, failed_now)
  on conflict (node) do update set serial = excluded.serial, failed = excluded.failed, reported_at = now()
    where excluded.serial >= inventory.apply_failure.serial;
  return true;
end $$;

/* A clean report of the failed serial or a newer one: that failure is over.
   A trigger rather than a line in record_report, so no path that records a
   report can forget it. */
create function inventory.clear_failure() returns trigger language plpgsql as $$
begin
  delete from inventory.apply_failure f where f.node = new.node and f.serial <= new.serial;
  return null;
end $$;
create trigger report_clears_failure after insert or update on inventory.report
  for each row execute function inventory.clear_failure();

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
       case when r.node is null and f.node is null then null else coalesce(jsonb_array_length(f.failed), 0) end as failing,
       r.reported_at,
       now() - r.reported_at as report_age,
       coalesce(r.holds_until <= now(), false) as stale,
       r.holds_until
  from inventory.node n
  left join inventory.report r on r.node = n.name
  left join inventory.apply_failure f on f.node = n.name;
comment on view inventory.node_status is 'One row a node: here / out of touch Nm / never spoken, the age of its last report (R2, R4), how many resources its last apply could not finish (failing), and whether the declaration it holds has expired (stale).';

-- A rollout (assignment) waits on clean applies and halts on failures and refusals.
grant select on inventory.apply_failure, inventory.refusal to mesh_assignment;
