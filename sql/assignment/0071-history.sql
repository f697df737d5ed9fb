-- What a node was declared at a time, and the difference between two times,
-- from what is kept. Every declaration is kept (assignment.declaration: the
-- signed envelope, when it was issued, when the node reported it applied);
-- nothing prunes them. Of reports only the newest is kept (inventory.report),
-- but each report's acknowledgement stays on the declaration it names, so
-- what a node reported holding at a time is the newest declaration it had
-- reported applied by then.

/* A time as an operator says it: a timestamp PostgreSQL reads (2026-12-05
   12:00, with or without a zone; now), or an age: 90s, 30m, 2h, 7d ago. */
create function assignment.time_of(said text) returns timestamptz language plpgsql stable as $$
begin
  if said ~ '^[0-9]{1,9}[smhd]$' then
    return now() - (left(said, -1) || case right(said, 1) when 's' then ' seconds' when 'm' then ' minutes'
                                                          when 'h' then ' hours' else ' days' end)::interval;
  end if;
  return said::timestamptz;
exception when data_exception then
  raise exception '% is not a time', coalesce(quote_literal(said), 'nothing') using errcode = 'MSHQ6',
    hint = 'give a timestamp (2026-12-05 12:00, 2026-12-05T12:00:00Z) or an age (90s, 30m, 2h, 7d)';
end $$;
comment on function assignment.time_of(text) is 'A time as an operator gives it: a timestamp, or an age (30m, 2h, 7d) before now; anything else is refused (MSHQ6).';

/* The resources a recorded envelope carries. */
create function assignment.resources_of(envelope bytea) returns jsonb language sql immutable as $$
  select ((convert_from(envelope, 'utf8')::jsonb->>'body')::jsonb)->'resources'
$$;

/* For each node named (null: every node ever declared): the declaration it
   had been issued by AT, and the newest it had reported applied by AT. */
create function assignment.declared_at(node_names text[], at timestamptz)
returns table (node text, serial bigint, issued_at timestamptz, resources jsonb,
               applied_serial bigint, applied_at timestamptz, applied_resources jsonb)
language sql stable set jit = off as $$
  with n as (select s.node from assignment.node_serial s where node_names is null or s.node = any(node_names)),
  -- The serials first, the envelopes read only for the one chosen a node.
  dec as (
    select distinct on (d.node) d.node, d.serial, d.issued_at
      from assignment.declaration d join n on n.node = d.node
     where d.issued_at <= at order by d.node, d.serial desc),
  app as (
    select distinct on (d.node) d.node, d.serial, d.acknowledged_at
      from assignment.declaration d join n on n.node = d.node
     where d.acknowledged_at <= at order by d.node, d.serial desc)
  select n.node, dec.serial, dec.issued_at, (select assignment.resources_of(x.envelope) from assignment.declaration x
                                              where x.node = dec.node and x.serial = dec.serial),
         app.serial, app.acknowledged_at, (select assignment.resources_of(x.envelope) from assignment.declaration x
                                            where x.node = app.node and x.serial = app.serial)
    from n left join dec on dec.node = n.node left join app on app.node = n.node
   order by n.node
$$;
comment on function assignment.declared_at(text[], timestamptz) is 'Each node''s declaration as of a time (serial, when issued, its resources) and the newest it had reported applied by then; null where there was none yet.';

/* What changes between two lists of resources, as mesh plan says it: each
   id added, changed or removed, and each service whose restartOn names a
   changed id or file path restarts (unless it changed itself). */
create function assignment.resource_changes(before jsonb, after jsonb) returns table (id text, change text)
language sql immutable as $$
  with b as (select e.value as r from jsonb_array_elements(coalesce(before, '[]')) e),
  a as (select e.value as r from jsonb_array_elements(coalesce(after, '[]')) e),
  diff as (
    select coalesce(a.r->>'id', b.r->>'id') as id,
           case when b.r is null then 'added' when a.r is null then 'removed' else 'changed' end as change,
           coalesce(a.r, b.r)->>'path' as path
      from a full join b on b.r->>'id' = a.r->>'id'
     where a.r is distinct from b.r),
  keys as (select array_agg(d.id) || coalesce(array_agg(d.path) filter (where d.path is not null), '{}') as k from diff d)
  select d.id, d.change from diff d
  union all
  select a.r->>'id', 'restarts' from a cross join keys
   where keys.k is not null and jsonb_typeof(a.r->'restartOn') = 'array' and (a.r->'restartOn') ?| keys.k
     and not exists (select 1 from diff d where d.id = a.r->>'id')
  order by 1, 2
$$;

/* Each node's changes from what it was declared at FROM_AT to what it was
   declared at TO_AT (null: every node). */
create function assignment.declared_changes(node_names text[], from_at timestamptz, to_at timestamptz)
returns table (node text, from_serial bigint, to_serial bigint, id text, change text) language sql stable set jit = off as $$
  select t.node, f.serial, t.serial, c.id, c.change
    from assignment.declared_at(node_names, to_at) t
    join assignment.declared_at(node_names, from_at) f on f.node = t.node
   cross join lateral assignment.resource_changes(f.resources, t.resources) c
   order by t.node, c.id, c.change
$$;
comment on function assignment.declared_changes(text[], timestamptz, timestamptz) is 'What each node''s declaration changed between two times, as plan_changes says it: added, changed, removed, restarts.';

/* The same, grouped as mesh plan --all prints it: nodes with the very same changes are one line. */
create function assignment.declared_changes_summary(node_names text[], from_at timestamptz, to_at timestamptz)
returns table (nodes bigint, changes text[], sample text[]) language sql stable as $$
  with per as (
    select p.node, array_agg(p.id || ' ' || p.change order by p.id, p.change) as changes
      from assignment.declared_changes(node_names, from_at, to_at) p group by p.node)
  select count(*), per.changes, (array_agg(per.node order by per.node))[1:5]
    from per group by per.changes
   order by count(*) desc, per.changes
$$;
