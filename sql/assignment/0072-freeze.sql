-- Change-freeze windows. Inside a window, a changed composition of a node the
-- window covers is held exactly as a rollout holds it (0017): the node keeps
-- the declaration it has, `mesh plan` says "held by freeze F until T", and
-- the change goes out when the window ends: mesh serve ends each window whose
-- time is up and declares what it held (W2), by itself. A window covers every
-- node, or those of a site, or those assigned a module, or both; a node never
-- declared still gets its first (nothing to hold it back from). An override
-- ends a window early, with a reason, and the history records it.

create table assignment.freeze (
  id              bigint generated always as identity primary key,
  from_at         timestamptz not null,
  until_at        timestamptz not null,
  site            text,
  module          text,
  made_at         timestamptz not null default now(),
  overridden_at   timestamptz,
  override_reason text,
  ended_at        timestamptz,
  check (until_at > from_at),
  check ((overridden_at is null) = (override_reason is null))
);
comment on table assignment.freeze is 'Change-freeze windows: inside one, changes to the nodes it covers are held as a rollout holds them.';
comment on column assignment.freeze.from_at is 'When the window opens.';
comment on column assignment.freeze.until_at is 'When it closes: what it held goes out then.';
comment on column assignment.freeze.site is 'Only the nodes of this site; null: every site.';
comment on column assignment.freeze.module is 'Only the nodes assigned this module; null: every node.';
comment on column assignment.freeze.overridden_at is 'When an operator ended it early (mesh freeze override).';
comment on column assignment.freeze.override_reason is 'Why it was ended early, as the operator said it.';
comment on column assignment.freeze.ended_at is 'When mesh serve (or the override) released what it held; null while it may still hold.';

/* The windows holding now: open, not overridden. */
create function assignment.freezes_now() returns setof assignment.freeze language sql stable as $$
  select * from assignment.freeze f
   where f.from_at <= now() and now() < f.until_at and f.overridden_at is null
$$;

/* Each declared node a window holds now, with the window that holds it
   longest (its end is when the change goes out). */
create function assignment.frozen_nodes() returns table (node text, freeze bigint, until_at timestamptz)
language sql stable as $$
  select distinct on (s.node) s.node, f.id, f.until_at
    from assignment.freezes_now() f
    join inventory.enrolled_node e on f.site is null or e.site = f.site
    join assignment.node_serial s on s.node = e.name
   where f.module is null or exists (select 1 from assignment.assignment a where a.node = e.name and a.module = f.module)
   order by s.node, f.until_at desc, f.id
$$;
comment on function assignment.frozen_nodes() is 'Each declared node a change-freeze window holds now, the window, and until when.';

/* The nodes whose change is held now: a rollout's (as 0017) and a freeze's. */
create or replace function assignment.held_nodes() returns table (node text) language sql stable as $$
  select s.node
    from assignment.node_serial s
    join assignment.rollout r on r.state in ('holding', 'rolling', 'paused', 'halted')
   where not exists (select 1 from assignment.rollout_node n
                      where n.rollout = r.id and n.node = s.node and n.released_at is not null)
  union
  select f.node from assignment.frozen_nodes() f
$$;

/* An explicit declare may not release a held change: a freeze's is named
   with its window, a rollout's as before (0017). */
create or replace function assignment.refuse_held(node_names text[]) returns void language plpgsql as $$
declare r assignment.rollout := assignment.open_rollout(); f record;
begin
  if coalesce(cardinality(node_names), 0) = 0 then return; end if;
  select string_agg(z.node, ', ' order by z.node) as nodes, min(z.freeze) as freeze, max(z.until_at) as until_at into f
    from assignment.frozen_nodes() z where z.node = any(node_names);
  if f.nodes is not null then
    raise exception 'the change to % is held by freeze % until %', f.nodes, f.freeze, f.until_at
      using errcode = 'MSHQ8', hint = 'it goes out when the window ends; to send it now: mesh freeze override ID --reason TEXT';
  end if;
  raise exception 'the change to % is held by rollout %, which is %', array_to_string(node_names, ', '), r.id, r.state
    using errcode = 'MSH28', hint = 'release it with mesh rollout start (in waves) or mesh rollout release (at once); see mesh plan --all';
end $$;

/* mesh freeze add. */
create function assignment.add_freeze(opens timestamptz, closes timestamptz, site_name text, module_name text)
returns bigint language plpgsql as $$
declare made bigint;
begin
  if opens is null or closes is null or closes <= opens then
    raise exception 'a freeze window from % until %: it must end after it begins', coalesce(opens::text, 'nothing'), coalesce(closes::text, 'nothing')
      using errcode = 'MSHQ9', hint = 'give both ends, the end after the start: mesh freeze add --from "2026-12-24 00:00" --until "2026-12-27 00:00"';
  end if;
  if closes <= now() then
    raise exception 'a freeze window that ended already (%)', closes
      using errcode = 'MSHB3', hint = 'give an --until in the future';
  end if;
  insert into assignment.freeze (from_at, until_at, site, module) values (opens, closes, site_name, module_name) returning id into made;
  return made;
end $$;

/* The windows serve ends: time up or overridden, what they held not yet
   released. Marked in the caller's transaction; the caller then declares
   what changed (W2). */
create function assignment.end_freezes() returns table (id bigint, until_at timestamptz) language sql as $$
  update assignment.freeze f set ended_at = now()
   where f.ended_at is null and (f.until_at <= now() or f.overridden_at is not null)
  returning f.id, f.until_at
$$;

/* mesh freeze override: end a window now, with a reason (the history records it). */
create function assignment.override_freeze(freeze_id bigint, why text) returns void language plpgsql as $$
begin
  if coalesce(btrim(why), '') = '' then
    raise exception 'an override of freeze % without a reason', freeze_id using errcode = 'MSHB4',
      hint = 'say why, for the history: mesh freeze override ID --reason "security fix for CVE-..."';
  end if;
  update assignment.freeze set overridden_at = now(), override_reason = why
   where id = freeze_id and overridden_at is null and until_at > now();
  if not found then
    raise exception 'no freeze % holds now or later', freeze_id using errcode = 'MSHB5', hint = 'mesh freeze list shows the windows';
  end if;
end $$;

/* mesh freeze remove: a window taken back (one not yet open, or by mistake). */
create function assignment.remove_freeze(freeze_id bigint) returns void language plpgsql as $$
begin
  delete from assignment.freeze where id = freeze_id;
  if not found then
    raise exception 'no freeze %', freeze_id using errcode = 'MSHB6', hint = 'mesh freeze list shows the windows';
  end if;
end $$;

/* For a DBA and `mesh freeze list`: each window, its state, and how many nodes it holds now. */
create view assignment.freeze_status as
select f.id, f.from_at, f.until_at, f.site, f.module,
       case when f.overridden_at is not null then 'overridden'
            when now() < f.from_at then 'waiting'
            when now() < f.until_at then 'holding'
            else 'ended' end as state,
       (select count(*) from assignment.frozen_nodes() z where z.freeze = f.id)::int as holds,
       f.override_reason, f.overridden_at, f.ended_at, f.made_at
  from assignment.freeze f;
comment on view assignment.freeze_status is 'Each change-freeze window: when, where, waiting / holding / ended / overridden, the nodes it holds now.';

-- The audit context records every window made, overridden or removed.
grant trigger on assignment.freeze to mesh_audit;
