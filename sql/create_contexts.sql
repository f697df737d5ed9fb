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
end $$;
