-- Promises (Q1): assertions over the network, the firewall and the services
-- together, kept as rows and checked in the transaction of every change that
-- could break them. A promise is one of a few kinds, each a SQL predicate
-- over what the declarations carry:
--
--   closed   no node of SITE opens PORT (any opening its firewall admits)
--   reaches  NODE reaches PEER:PORT (an overlay path, and PEER's firewall
--            admits NODE's overlay address on PORT)
--   runs     every node assigned MODULE runs service SERVICE
--   hubs     at least AT_LEAST hubs (dialable nodes named hubs)
--
-- The check: the first row a transaction changes in a table a promise speaks
-- of (a module's resources, an assignment, a hub, a provision's grant) notes
-- the change and which promises were broken before it; a deferred constraint
-- trigger runs once at commit and refuses (MSHQ1) when a promise kept before
-- is broken now, naming the promise, what breaks it and the change. The
-- refusal aborts that transaction, so the change is not committed and nothing
-- is owed: W2's re-declare runs after the change commits, never before. A
-- promise already broken by something else (a node retired) does not refuse
-- every later change: only a change that breaks a kept promise is refused.

create table assignment.promise (
  name     text primary key check (name ~ '^[a-z][a-z0-9-]{0,62}$'),
  kind     text not null check (kind in ('closed', 'reaches', 'runs', 'hubs')),
  site     text,
  node     text,
  peer     text,
  module   text,
  service  text,
  port     integer check (port between 1 and 65535),
  at_least integer check (at_least >= 1),
  made_at  timestamptz not null default now(),
  check (case kind
           when 'closed' then site is not null and port is not null
           when 'reaches' then node is not null and peer is not null and port is not null
           when 'runs' then module is not null and service is not null
           when 'hubs' then at_least is not null end)
);
comment on table assignment.promise is 'What the operator promised of the fleet (Q1): checked in the transaction of every change to modules, assignments, hubs and grants.';
comment on column assignment.promise.name is 'Its name: a refusal and mesh promise remove name it.';
comment on column assignment.promise.kind is 'closed: no node of site opens port; reaches: node reaches peer:port; runs: every node assigned module runs service; hubs: at least at_least hubs.';
comment on column assignment.promise.site is 'closed: the site none of whose nodes may open the port.';
comment on column assignment.promise.node is 'reaches: the node that must reach the peer.';
comment on column assignment.promise.peer is 'reaches: the node that must be reached.';
comment on column assignment.promise.module is 'runs: the module whose every node runs the service.';
comment on column assignment.promise.service is 'runs: the service (a service resource''s name) those nodes run.';
comment on column assignment.promise.port is 'closed: the port nobody of the site opens; reaches: the port the peer must admit the node on.';
comment on column assignment.promise.at_least is 'hubs: how many hubs there must be at least.';
comment on column assignment.promise.made_at is 'When it was promised.';

/* A promise in words, as mesh promise list prints it. */
create function assignment.promise_text(p assignment.promise) returns text language sql immutable as $$
  select case p.kind
           when 'closed' then format('no node of site %s opens port %s', p.site, p.port)
           when 'reaches' then format('%s reaches %s:%s', p.node, p.peer, p.port)
           when 'runs' then format('every node assigned module %s runs service %s', p.module, p.service)
           when 'hubs' then format('at least %s hubs', p.at_least) end
$$;

/* Every promise broken now, with what breaks it (one reason a promise, the
   first by node). The openings are read once, and only when a promise reads
   them; the peer graph only for the nodes a reaches promise names. */
create function assignment.broken_promises() returns table (name text, why text)
language sql stable set jit = off as $$
  with wanted as materialized (select exists (select 1 from assignment.promise p where p.kind in ('closed', 'reaches')) as yes),
  o as materialized (select f.* from assignment.firewall_openings(false) f where (select yes from wanted)
                       and (f.sources is null or cardinality(f.sources) > 0)),
  m as materialized (select x.name, x.site, host(x.address) as address, x.hub from overlay.member x),
  closed as (
    select p.name, (select format('%s of site %s opens %s %s (%s)', o.node, p.site, o.proto,
                                   o.port || coalesce('-' || o.port_to, ''), o.why)
                      from o join inventory.enrolled_node e on e.name = o.node
                     where e.site = p.site and p.port between o.port and coalesce(o.port_to, o.port)
                     order by o.node, o.port limit 1) as why
      from assignment.promise p where p.kind = 'closed'),
  reaches as (
    select p.name,
           case when a.name is null then format('%s is not in the overlay (not enrolled, or no address yet)', p.node)
                when b.name is null then format('%s is not in the overlay (not enrolled, or no address yet)', p.peer)
                when not exists (select 1 from overlay.peers_of(array[p.node]) x where x.peer = p.peer or x.route)
                  then format('no overlay path from %s to %s (no hub, and not direct peers)', p.node, p.peer)
                when not exists (select 1 from o where o.node = p.peer and p.port between o.port and coalesce(o.port_to, o.port)
                                    and (o.sources is null or a.address || '/32' = any(o.sources)))
                  then format('%s admits %s on no opening for port %s', p.peer, p.node, p.port) end as why
      from assignment.promise p
      left join m a on a.name = p.node
      left join m b on b.name = p.peer
     where p.kind = 'reaches'),
  runs as (
    select p.name, (select format('%s is assigned module %s and runs no service %s', a.node, p.module, p.service)
                      from assignment.assignment a
                     where a.module = p.module
                       and not exists (select 1 from assignment.assignment a2
                                         join catalogue.module_resources r on r.name = a2.module
                                         cross join lateral jsonb_array_elements(r.resources) x
                                        where a2.node = a.node and x->>'kind' = 'service' and x->>'name' = p.service)
                     order by a.node limit 1) as why
      from assignment.promise p where p.kind = 'runs'),
  hubs as (
    select p.name, case when c.n < p.at_least then format('%s hubs (%s), fewer than %s', c.n,
                                                          coalesce(c.names, 'none'), p.at_least) end as why
      from assignment.promise p
     cross join (select count(*)::int as n, string_agg(m.name, ', ' order by m.name) as names from m where m.hub) c
     where p.kind = 'hubs')
  select x.name, x.why from (select * from closed union all select * from reaches union all select * from runs union all select * from hubs) x
   where x.why is not null
$$;
comment on function assignment.broken_promises() is 'Every promise broken now and what breaks it (Q1): the one predicate the change check, mesh promise add and list read.';

/* For a DBA, the console and `mesh promise list`: each promise, in words, kept or broken and why. */
create view assignment.promise_state as
select p.name, p.kind, assignment.promise_text(p) as promise,
       case when b.name is null then 'kept' else 'broken' end as state, b.why, p.made_at
  from assignment.promise p left join assignment.broken_promises() b on b.name = p.name;
comment on view assignment.promise_state is 'Each promise: what it says, kept or broken, and what breaks it.';

/* mesh promise add: the promise must be well formed and kept now (a promise
   broken when made would refuse nothing it could name). */
create function assignment.add_promise(promise_name text, promise_kind text, site_name text, node_name text, peer_name text,
                                       module_name text, service_name text, port_number integer, hubs_at_least integer)
returns void language plpgsql as $$
declare why text;
begin
  if promise_name is null or promise_name !~ '^[a-z][a-z0-9-]{0,62}$' then
    raise exception 'a promise named %: not a name', coalesce(quote_literal(promise_name), 'nothing') using errcode = 'MSHB7',
      hint = 'name it with a lower-case letter then letters, digits or dashes: mesh promise add no-dmz-postgres --site dmz --closed 5432';
  end if;
  if promise_kind is null or not ((promise_kind = 'closed' and site_name is not null and port_number between 1 and 65535)
          or (promise_kind = 'reaches' and node_name is not null and peer_name is not null and port_number between 1 and 65535)
          or (promise_kind = 'runs' and module_name is not null and service_name is not null)
          or (promise_kind = 'hubs' and hubs_at_least >= 1)) then
    raise exception 'promise %: not one of the kinds mesh keeps', promise_name using errcode = 'MSHQ3',
      hint = 'one of: --site S --closed PORT; --node A --reaches B:PORT; --module M --runs SERVICE; --hubs N (at least 1)';
  end if;
  insert into assignment.promise (name, kind, site, node, peer, module, service, port, at_least)
  values (promise_name, promise_kind,
          case when promise_kind = 'closed' then site_name end,
          case when promise_kind = 'reaches' then node_name end,
          case when promise_kind = 'reaches' then peer_name end,
          case when promise_kind = 'runs' then module_name end,
          case when promise_kind = 'runs' then service_name end,
          case when promise_kind in ('closed', 'reaches') then port_number end,
          case when promise_kind = 'hubs' then hubs_at_least end)
  on conflict (name) do nothing;
  if not found then
    raise exception 'promise % exists already', promise_name using errcode = 'MSHQ4',
      hint = 'choose another name, or mesh promise remove it first (mesh promise list shows them)';
  end if;
  select b.why into why from assignment.broken_promises() b where b.name = promise_name;
  if why is not null then
    raise exception 'promise % is broken already: %', promise_name, why using errcode = 'MSHQ2',
      hint = 'nothing was kept; make it true first, then promise it';
  end if;
end $$;

/* mesh promise remove. */
create function assignment.remove_promise(promise_name text) returns void language plpgsql as $$
begin
  delete from assignment.promise where name = promise_name;
  if not found then
    raise exception 'no promise named %', promise_name using errcode = 'MSHQ5', hint = 'mesh promise list shows the promises';
  end if;
end $$;

/* The first row a transaction changes in a table a promise speaks of: note
   the change in words and the promises broken before it, for the check at
   commit. Nothing when there is no promise (the common fleet pays a lookup).
   Security definer: the modules, hubs and grants are changed by their own
   contexts' roles, and the promises and what they read are assignment's. */
create function assignment.note_change() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
declare r jsonb := to_jsonb(coalesce(new, old)); what text;
begin
  if coalesce(current_setting('mesh.promise_change', true), '') <> '' then return case when tg_op = 'DELETE' then old else new end; end if;
  if not exists (select 1 from assignment.promise) then return case when tg_op = 'DELETE' then old else new end; end if;
  what := case tg_table_schema || '.' || tg_table_name
            when 'catalogue.module' then case tg_op when 'DELETE' then 'module ' || (r->>'name') || ' removed'
                                                    else 'module add ' || (r->>'name') end
            when 'assignment.assignment' then case tg_op when 'DELETE' then format('unassign %s %s', r->>'module', r->>'node')
                                                         else format('assign %s %s', r->>'module', r->>'node') end
            when 'overlay.hub' then case tg_op when 'DELETE' then format('overlay hub %s --off', r->>'node')
                                               else format('overlay hub %s', r->>'node') end
            when 'provision.grant' then case tg_op when 'DELETE' then format('provision revoke %s %s', r->>'provision', r->>'consumer')
                                                   else format('provision grant %s %s', r->>'provision', r->>'consumer') end
            else tg_table_name || ' changed' end;
  perform set_config('mesh.promise_change', what, true);
  perform set_config('mesh.promises_broken_before',
                     coalesce((select string_agg(b.name, ',') from assignment.broken_promises() b), ''), true);
  if tg_op = 'DELETE' then return old; end if;
  return new;
end $$;

/* At commit, once: a promise kept before the change and broken now refuses
   the whole transaction (Q1). */
create function assignment.check_promises() returns trigger
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
declare b record; what text := coalesce(current_setting('mesh.promise_change', true), '');
begin
  if what = '' or coalesce(current_setting('mesh.promises_checked', true), '') = 'yes' then return null; end if;
  perform set_config('mesh.promises_checked', 'yes', true);
  select x.name, x.why into b from assignment.broken_promises() x
   where x.name <> all(string_to_array(current_setting('mesh.promises_broken_before', true), ','))
   order by x.name limit 1;
  if b.name is not null then
    raise exception 'refused: % would break promise % (%): %', what, b.name,
      (select assignment.promise_text(p) from assignment.promise p where p.name = b.name), b.why
      using errcode = 'MSHQ1',
      hint = format('nothing was changed or sent; keep the promise, or remove it first: mesh promise remove %s', b.name);
  end if;
  return null;
end $$;

create trigger note_change before insert or update or delete on assignment.assignment
  for each row execute function assignment.note_change();
create constraint trigger check_promises after insert or update or delete on assignment.assignment
  deferrable initially deferred for each row execute function assignment.check_promises();
create trigger note_change before insert or update or delete on catalogue.module
  for each row execute function assignment.note_change();
create constraint trigger check_promises after insert or update or delete on catalogue.module
  deferrable initially deferred for each row execute function assignment.check_promises();
create trigger note_change before insert or update or delete on overlay.hub
  for each row execute function assignment.note_change();
create constraint trigger check_promises after insert or update or delete on overlay.hub
  deferrable initially deferred for each row execute function assignment.check_promises();
create trigger note_change before insert or update or delete on provision.grant
  for each row execute function assignment.note_change();
create constraint trigger check_promises after insert or update or delete on provision.grant
  deferrable initially deferred for each row execute function assignment.check_promises();
