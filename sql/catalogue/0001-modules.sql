-- catalogue: what modules exist, at which version, from where.

create table catalogue.module (
  name       text primary key check (name ~ '^[a-z][a-z0-9-]{0,62}$'),
  version    integer not null default 1 check (version > 0),
  resources  jsonb not null check (jsonb_typeof(resources) = 'array'),
  origin     text not null check (origin in ('handed', 'built', 'shipped')),
  updated_at timestamptz not null default now()
);
comment on table catalogue.module is 'A module: the resources it puts on every node it is assigned to.';
comment on column catalogue.module.name is 'Its name; assignments and builds refer to it.';
comment on column catalogue.module.version is 'Goes up each time its resources change; unchanged resources keep the version.';
comment on column catalogue.module.resources is 'The resources, checked by the same parser the host uses (src/wire/parse_resources.ts).';
comment on column catalogue.module.origin is 'handed: added by hand from a file; built: from a build of its source; shipped: carried with the control plane.';
comment on column catalogue.module.updated_at is 'When its resources last changed.';

/* Add or replace a module's resources. The version moves only when they change. */
create function catalogue.put_module(module_name text, module_resources jsonb, module_origin text)
returns table (name text, version integer) language sql as $$
  insert into catalogue.module as m (name, resources, origin) values (module_name, module_resources, module_origin)
  on conflict (name) do update set
    resources = excluded.resources, origin = excluded.origin,
    version = case when m.resources = excluded.resources then m.version else m.version + 1 end,
    updated_at = case when m.resources = excluded.resources then m.updated_at else now() end
  returning m.name, m.version
$$;

create view catalogue.module_resources as select name, version, resources from catalogue.module;
comment on view catalogue.module_resources is 'What assignment composes declarations from.';
grant usage on schema catalogue to mesh_assignment;
grant select on catalogue.module_resources to mesh_assignment;
