-- Drift that repeats is news, and a host's refusals are facts (issue 20).
--
-- Each resource a host put back (a report's `corrected`, D6) is one row of
-- inventory.correction; a resource put back more than fighting_after times
-- within the last hour is flagged in inventory.drift as fighting something on
-- the machine (a cron job, another tool), so an operator goes and finds it.
-- A refusal a host reported (forged, malformed, replayed, stale) is kept as
-- its node's last refusal: it still moves last_seen and nothing of the last
-- report (R3), but it lands in SQL, where the audit context keeps every one.
--
-- The audit context is migrated last and hangs its own triggers on the tables
-- where inventory's facts land; inventory only grants it that (TRIGGER on the
-- table is what CREATE TRIGGER needs), and knows nothing else of it.

create table inventory.correction (
  node         text not null references inventory.node (name) on delete cascade,
  resource     text not null,
  corrected_at timestamptz not null default now()
);
comment on table inventory.correction is 'One row each time a host put a resource back (D6): the count that tells drift that repeats from drift that happened once.';
comment on column inventory.correction.node is 'The host that put it back.';
comment on column inventory.correction.resource is 'The resource id it reported corrected (file:/etc/x, service:web, ...).';
comment on column inventory.correction.corrected_at is 'When the report saying so arrived.';
create index correction_by_resource on inventory.correction (node, resource, corrected_at);

create table inventory.drift_setting (
  one            boolean primary key default true check (one),
  fighting_after integer not null default 3 check (fighting_after > 0)
);
comment on table inventory.drift_setting is 'One row: when repeated drift is flagged.';
comment on column inventory.drift_setting.one is 'There is exactly one row.';
comment on column inventory.drift_setting.fighting_after is 'A resource put back more than this many times within an hour is fighting something on the machine.';
insert into inventory.drift_setting default values;

/* Count what a report says was put back. One insert for the whole list, and
   the report handler calls it only when the list is not empty: the report path
   is the busiest write the mesh has. A report from a node that is not enrolled
   counts nothing (record_report refuses it on its own). */
create function inventory.record_corrections(node_name text, resources text[]) returns integer language sql as $$
  with added as (
    insert into inventory.correction (node, resource)
    select node_name, r from unnest(resources) r
     where exists (select 1 from inventory.node n where n.name = node_name and n.enrolled_at is not null)
    returning 1)
  select count(*)::int from added
$$;

/* How many times in an hour is too many: more than TIMES is fighting. */
create function inventory.set_fighting_after(times integer) returns integer language sql as $$
  update inventory.drift_setting set fighting_after = times returning fighting_after
$$;

/* The one answer to "what keeps changing on my machines?", for `mesh drift`
   and any DBA: each resource ever put back, how often in the last hour and in
   all, when last, and whether that is more than the setting allows. */
create view inventory.drift as
select c.node,
       c.resource,
       (count(*) filter (where c.corrected_at > now() - interval '1 hour'))::int as last_hour,
       count(*)::int as times,
       max(c.corrected_at) as last_at,
       count(*) filter (where c.corrected_at > now() - interval '1 hour') > s.fighting_after as fighting,
       s.fighting_after
  from inventory.correction c
 cross join inventory.drift_setting s
 group by c.node, c.resource, s.fighting_after;
comment on view inventory.drift is 'Each resource a host put back: times in the last hour, in all, last at, and fighting (more than drift_setting.fighting_after in the last hour: something on the machine keeps changing it).';

create table inventory.refusal (
  node       text primary key references inventory.node (name) on delete cascade,
  serial     bigint,
  fault      text not null,
  reason     text not null,
  refused_at timestamptz not null default now()
);
comment on table inventory.refusal is 'The last declaration each host refused, as it said it; every one is kept by the audit history.';
comment on column inventory.refusal.node is 'The host that refused.';
comment on column inventory.refusal.serial is 'The serial it refused, when it could read one.';
comment on column inventory.refusal.fault is 'forged, malformed, or another fault the host names (replayed is a forged reason).';
comment on column inventory.refusal.reason is 'What the host said, in full.';
comment on column inventory.refusal.refused_at is 'When the report of it arrived.';

/* A host refused a declaration (R3): last_seen moves, the refusal is kept as
   the node's last one, and nothing of its last report changes. Returns false
   for a node that is not enrolled (nothing is kept). */
create function inventory.record_refusal(node_name text, refused_serial bigint, refusal_fault text, refusal_reason text)
returns boolean language plpgsql as $$
begin
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null;
  if not found then return false; end if;
  insert into inventory.refusal (node, serial, fault, reason) values (node_name, refused_serial, refusal_fault, refusal_reason)
  on conflict (node) do update set serial = excluded.serial, fault = excluded.fault, reason = excluded.reason, refused_at = now();
  return true;
end $$;

grant usage on schema inventory to mesh_audit;
grant trigger on inventory.token, inventory.node, inventory.refusal to mesh_audit;
