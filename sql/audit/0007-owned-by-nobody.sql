-- The history owned by nobody who writes it (C3). mesh_audit, the owner of
-- this schema, may no longer log in (sql/create_contexts.sql): an owner can
-- turn off its own table's triggers and grant itself UPDATE, so the role a
-- process holds must not be the owner. What follows gives the readers their
-- role, makes the row's "who" the database's word rather than the client's,
-- and lists the triggers the history depends on so that they are guarded
-- (the event trigger in create_contexts.sql) and checked by `mesh audit
-- verify`, which also checks the chain against a head kept outside the store.

/* Readers: mesh log, mesh audit verify and head, the console's history page.
   SELECT and nothing else; audit.append stays granted to nobody (the
   triggers call it as its owner). */
grant usage on schema audit to mesh_audit_reader;
grant select on audit.event, audit.kind, audit.log, audit.migration_digest to mesh_audit_reader;

/* Who made a change is the database role of the session that made it. The
   client's application_name was a string any client sets to anything. */
create or replace function audit.chain() returns trigger language plpgsql as $$
declare last_seq bigint; last_hash bytea;
begin
  perform pg_advisory_xact_lock(hashtext('mesh audit chain'));
  select e.seq, e.hash into last_seq, last_hash from audit.event e order by e.seq desc limit 1;
  if not found then
    last_seq := 0;
    last_hash := decode(repeat('00', 32), 'hex');
  end if;
  new.seq := last_seq + 1;
  new.at := now();
  new.actor := session_user;
  new.role := session_user;
  new.detail := coalesce(new.detail, '{}'::jsonb);
  new.prev_hash := last_hash;
  new.hash := audit.link(last_hash, new);
  return new;
end $$;
comment on column audit.event.actor is 'Who: the database role of the session that made the change (rows written before that rule carry the name the client gave itself).';
comment on column audit.log.actor is 'Who: the database role of the session that made the change.';

/* The triggers the history depends on: its own (chain, append-only) and the
   ones on the other contexts' tables where their facts land. A migration of
   this context that adds one adds its row here; one that must drop one
   deletes its row first (the guard refuses a listed trigger going away). */
create table audit.watched (
  on_table text not null,
  trigger  text not null,
  primary key (on_table, trigger)
);
comment on table audit.watched is 'The audit triggers (C3): each must exist and be enabled on its table; mesh audit verify checks them, and no context may drop or disable one.';
comment on column audit.watched.on_table is 'The table, schema-qualified (inventory.token).';
comment on column audit.watched.trigger is 'The trigger''s name on that table.';
insert into audit.watched (on_table, trigger)
select format('%I.%I', n.nspname, c.relname), t.tgname
  from pg_trigger t
  join pg_class c on c.oid = t.tgrelid
  join pg_namespace n on n.oid = c.relnamespace
  join pg_proc p on p.oid = t.tgfoid
 where p.pronamespace = 'audit'::regnamespace and not t.tgisinternal;
grant select on audit.watched to mesh_audit_reader;

/* Each listed trigger that is not in force: its table gone (dropped or
   renamed), the trigger gone, or disabled (ENABLE REPLICA counts as
   disabled: it fires only where replication is being applied). From the
   catalogues by name, which every role may read: the reader has no right on
   the other contexts' schemas, and needs none to see their triggers. */
create function audit.trigger_problems() returns table (on_table text, trigger text, problem text)
language sql stable set search_path = pg_catalog as $$
  select w.on_table, w.trigger,
         case when c.oid is null then 'its table is gone'
              when t.oid is null then 'it is missing'
              else 'it is disabled' end
    from audit.watched w
    left join (pg_class c join pg_namespace n on n.oid = c.relnamespace)
      on format('%I.%I', n.nspname, c.relname) = w.on_table and c.relkind in ('r', 'p')
    left join pg_trigger t on t.tgrelid = c.oid and t.tgname = w.trigger
   where t.oid is null or t.tgenabled not in ('O', 'A')
   order by w.on_table, w.trigger
$$;
comment on function audit.trigger_problems() is 'C3: each audit trigger that is missing, disabled or whose table is gone; no row when all are in force.';

/* `mesh audit verify [--head FILE]`: refuses with the first thing wrong,
   else answers the history's length and head. In order: a trigger not in
   force (MSH75: facts may be missing from the history from then on); the
   chain recomputed from row 1 (MSH71: a row changed or removed); the head
   kept outside the store, when given (MSH76): row KEPT_SEQ must still carry
   KEPT_HASH. A chain rewritten whole (every hash recomputed after an edit)
   or cut below the kept row passes the recomputation and fails there. */
create function audit.check_history(kept_seq bigint default null, kept_hash text default null)
returns table (rows bigint, head_seq bigint, head text) language plpgsql stable as $$
declare p record; b record; found_hash text;
begin
  select * into p from audit.trigger_problems() limit 1;
  if found then
    raise exception 'the audit trigger % on % is not in force: %', p.trigger, p.on_table, p.problem
      using errcode = 'MSH75';
  end if;
  select * into b from audit.verify() limit 1;
  if found then
    raise exception 'the audit history does not match from row % (%, node %, at %): %', b.seq, coalesce(b.kind, '-'), coalesce(b.node, '-'), coalesce(b.at::text, '-'), b.problem
      using errcode = 'MSH71';
  end if;
  if kept_seq is not null then
    select encode(e.hash, 'hex') into found_hash from audit.event e where e.seq = kept_seq;
    if found_hash is null or found_hash <> lower(kept_hash) then
      raise exception 'the audit history no longer reaches the kept head: row % %', kept_seq,
        case when found_hash is null then 'is gone (rows were cut from its end)'
             else format('has hash %s, the kept head says %s (the chain was rewritten)', found_hash, lower(kept_hash)) end
        using errcode = 'MSH76';
    end if;
  end if;
  return query select count(*), coalesce(max(e.seq), 0),
    coalesce((select encode(x.hash, 'hex') from audit.event x order by x.seq desc limit 1), repeat('0', 64))
    from audit.event e;
end $$;
comment on function audit.check_history(bigint, text) is 'C3: the audit triggers in force, the chain whole, and (given) the kept head still on it; refuses with the first problem, else the length and head.';

-- One path for one job: verify reads check_history.
drop function audit.check_chain();
