-- Run once per database by a superuser (the bundle, the test harness), before
-- `mesh migrate`. Each context is a schema owned by a role of its own; the
-- role logs in and runs its own migrations, so everything in a schema is owned
-- by its context and nothing else can read it unless granted by name.
-- Idempotent: roles are cluster-wide and may already exist.
do $$
declare ctx text;
begin
  foreach ctx in array array['inventory','catalogue','assignment','secret','provision','overlay','audit'] loop
    if not exists (select 1 from pg_roles where rolname = 'mesh_' || ctx) then
      execute format('create role %I login', 'mesh_' || ctx);
    end if;
    execute format('create schema if not exists %I authorization %I', ctx, 'mesh_' || ctx);
    execute format('grant connect on database %I to %I', current_database(), 'mesh_' || ctx);
  end loop;
  -- Nothing of ours lives in public; nobody creates there.
  execute 'revoke create on schema public from public';

  -- The history (C3) is owned by nobody who writes it or reads it. mesh_audit
  -- owns the audit schema and may not log in: an owner may turn off its own
  -- table's triggers and grant itself UPDATE, so no process may be it. Its
  -- migrations run in a superuser's session that sets the role (`mesh
  -- migrate` reads MESH_STORE_AUDIT_OWNER for that), and its rows are written
  -- by its security-definer triggers. Readers (mesh log, mesh audit, the
  -- console) log in as mesh_audit_reader, granted SELECT by the audit
  -- migrations and nothing else.
  execute 'alter role mesh_audit nologin';
  if not exists (select 1 from pg_roles where rolname = 'mesh_audit_reader') then
    execute 'create role mesh_audit_reader login';
  end if;
  execute format('grant connect on database %I to mesh_audit_reader', current_database());

  -- The console (P1) logs in as a reader of each context it shows, never as
  -- the owner: each reader is granted USAGE and SELECT by its context's
  -- migrations, and the only writes it may make are signing in and out,
  -- through inventory's security-definer functions.
  foreach ctx in array array['inventory','assignment','overlay','catalogue'] loop
    if not exists (select 1 from pg_roles where rolname = 'mesh_' || ctx || '_reader') then
      execute format('create role %I login', 'mesh_' || ctx || '_reader');
    end if;
    execute format('grant connect on database %I to %I', current_database(), 'mesh_' || ctx || '_reader');
  end loop;
end $$;

/* C3: a context's role owns its tables, and PostgreSQL lets a table's owner
   drop or disable any trigger on it, the audit triggers included. What it
   does not let an owner touch is an event trigger: only a superuser creates,
   alters or drops one, and it fires for every other role's DDL. This one runs
   after each statement that could take an audit trigger away (ALTER TABLE,
   DROP TRIGGER, ALTER TRIGGER, CREATE TABLE: a table renamed away and made
   again) and refuses it (MSH74) when any trigger audit.watched lists is
   missing or off on a table that exists. The rule itself is
   audit.trigger_problems(), which `mesh audit verify` reads too; until the
   audit migrations have made it there is nothing to guard. The function is
   owned by mesh_audit, so it runs as that role and no context can replace it. */
create or replace function audit.guard_triggers() returns event_trigger
language plpgsql security definer set search_path = pg_catalog as $$
declare p record;
begin
  if to_regprocedure('audit.trigger_problems()') is null then
    return;
  end if;
  select * into p from audit.trigger_problems() x where x.problem <> 'its table is gone' limit 1;
  if found then
    raise exception 'the audit trigger % on % would be %: refused (the history records every change to that table)',
      p.trigger, p.on_table, case p.problem when 'it is disabled' then 'disabled' else 'gone' end
      using errcode = 'MSH74';
  end if;
end $$;
alter function audit.guard_triggers() owner to mesh_audit;
do $$
begin
  if not exists (select 1 from pg_event_trigger where evtname = 'mesh_audit_guard') then
    create event trigger mesh_audit_guard on ddl_command_end
      when tag in ('ALTER TABLE', 'DROP TRIGGER', 'ALTER TRIGGER', 'CREATE TABLE')
      execute function audit.guard_triggers();
  end if;
end $$;
