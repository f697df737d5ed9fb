-- The fleet one page at a time, for a fleet of any size: the console's fleet
-- page and `mesh node list --limit` read these two functions, and so can a
-- DBA. A page is the rows of node_status in name order after a given name
-- (keyset: the page after b050000 costs what the first page costs, where an
-- offset would read every row before it), narrowed by a name prefix, a site
-- and a state. Only the page's own rows are joined to agent_versions and
-- pending_delivery: each is a lookup by name, so a page of 100 costs 100
-- lookups whether the fleet holds a thousand nodes or a hundred thousand.

/* The state classes a page may be narrowed to: node_status says `here`,
   `wedged`, `out of touch Nm` or `never spoken`, and any of them may be stale
   (the declaration it holds has expired, C2). Anything else is refused with
   the list, so a typo never reads as an empty fleet. */
create function inventory.node_state_class(state text, stale boolean, wanted text) returns boolean
language sql immutable as $$
  select case wanted
    when 'here' then state = 'here'
    when 'wedged' then state = 'wedged'
    when 'away' then state like 'out of touch%'
    when 'never' then state = 'never spoken'
    when 'stale' then stale
  end
$$;
comment on function inventory.node_state_class(text, boolean, text) is 'Whether a node_status row (its state and stale) is of the class WANTED: here, wedged, away (out of touch), never (never spoken) or stale.';

/* Refuse a filter the page functions cannot read: an unknown state class, a
   page size outside 1..1000 (a page is what a person reads; the whole fleet
   is mesh node list without --limit), or a site or prefix that is empty. */
create function inventory.check_fleet_filter(page_size integer, name_prefix text, site_name text, state_class text) returns void
language plpgsql immutable as $$
begin
  if state_class is not null and state_class not in ('here', 'wedged', 'away', 'never', 'stale') then
    raise exception 'there is no state %: a page is narrowed to here, wedged, away, never or stale', quote_literal(state_class)
      using errcode = 'MSHT2', hint = 'pick one of here, wedged, away (out of touch), never (never spoken) or stale';
  end if;
  if page_size is not null and (page_size < 1 or page_size > 1000) then
    raise exception 'a page of % rows is refused: a page holds 1 to 1000', page_size
      using errcode = 'MSHT3', hint = 'give a page size from 1 to 1000; the whole fleet is mesh node list without --limit';
  end if;
  if name_prefix = '' or site_name = '' then
    raise exception 'an empty prefix or site narrows nothing'
      using errcode = 'MSHT4', hint = 'leave the filter out, or give at least one character';
  end if;
end $$;
comment on function inventory.check_fleet_filter(integer, text, text, text) is 'Refuses a fleet page filter: an unknown state class (MSHT2), a page size outside 1..1000 (MSHT3), an empty prefix or site (MSHT4).';

/* One page of the fleet: node_status's rows with the newest declaration owed
   (assignment.pending_delivery) and the agent's standing (agent_versions),
   name after AFTER_NAME (none: from the start), at most PAGE_SIZE (none: every
   row), narrowed by NAME_PREFIX, SITE_NAME and STATE_CLASS (none: no filter).
   The next page starts after the last name of this one.
   Shaped for the planner: the query runs through EXECUTE ... USING, so it is
   planned with the values given (a filter left out folds away, and a page
   walks the node table's name index and stops after PAGE_SIZE rows, where one
   plan for every value would sort the fleet); and agent_versions is read for
   the page's names alone (name = any of them), so its per-node subqueries run
   once a row of the page, not once a row of the fleet. Volatile, not stable:
   its query takes its snapshot when it runs, as a plain select of node_status
   does, so a read that waited on a lock sees what committed while it waited. */
create function inventory.fleet_page(after_name text default null, page_size integer default null, name_prefix text default null,
                                     site_name text default null, state_class text default null)
returns table (name text, site text, state text, stale boolean, holds_until timestamptz, last_seen timestamptz, enrolled_at timestamptz,
               reported_serial bigint, holds integer, failing integer, reported_at timestamptz, agent_version text, report_age text,
               owed_serial bigint, outdated boolean, agent_why text)
language plpgsql volatile as $fn$
begin
  perform inventory.check_fleet_filter(page_size, name_prefix, site_name, state_class);
  return query execute $q$
  with page as materialized (
    select * from inventory.node_status n
     where ($1::text is null or n.name > $1::text)
       and ($3::text is null or starts_with(n.name, $3::text))
       and ($4::text is null or n.site = $4::text)
       and ($5::text is null or inventory.node_state_class(n.state, n.stale, $5::text))
     order by n.name
     limit $2::integer)
  select s.name, s.site, s.state, s.stale, s.holds_until, s.last_seen, s.enrolled_at, s.reported_serial, s.holds, s.failing, s.reported_at,
         s.agent_version,
         case when s.reported_at is null then 'never reported' else inventory.describe_age(s.report_age) end,
         -- The newest declaration not yet delivered, read through the view assignment grants inventory (W1).
         (select max(p.serial) from assignment.pending_delivery p where p.node = s.name and p.kind = 'declaration'),
         v.outdated, v.why
    from page s
    join (select a.name, a.outdated, a.why from inventory.agent_versions a
           where a.name = any(array(select g.name from page g))) v on v.name = s.name
   order by s.name $q$
  using after_name, page_size, name_prefix, site_name, state_class;
end $fn$;
comment on function inventory.fleet_page(text, integer, text, text, text) is 'One page of the fleet in name order: node_status with the declaration owed and the agent''s standing, after a name (keyset), narrowed by name prefix, site and state class. The console''s fleet page and mesh node list read it.';

/* How many nodes the fleet has in each state, and how many pass the filter:
   the fleet page's counter, beside the page it shows. Every node's state is
   computed once (offset 0 keeps the planner from copying node_status's state
   expression into each count, which cost several times the read). */
create function inventory.fleet_counts(name_prefix text default null, site_name text default null, state_class text default null)
returns table (nodes bigint, here bigint, wedged bigint, away bigint, never bigint, stale bigint, matching bigint)
language plpgsql stable as $$
begin
  perform inventory.check_fleet_filter(null, name_prefix, site_name, state_class);
  return query
  select count(*),
         count(*) filter (where n.state = 'here'),
         count(*) filter (where n.state = 'wedged'),
         count(*) filter (where n.state like 'out of touch%'),
         count(*) filter (where n.state = 'never spoken'),
         count(*) filter (where n.stale),
         count(*) filter (where (name_prefix is null or starts_with(n.name, name_prefix))
                            and (site_name is null or n.site = site_name)
                            and (state_class is null or inventory.node_state_class(n.state, n.stale, state_class)))
    from (select s.name, s.site, s.state, s.stale from inventory.node_status s offset 0) n;
end $$;
comment on function inventory.fleet_counts(text, text, text) is 'The fleet''s nodes by state (here, wedged, away, never spoken, stale) and how many pass the fleet page''s filter.';
