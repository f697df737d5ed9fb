-- A module says what it puts on a node: files, directories, services,
-- containers, and the openings it needs. The overlay (wireguard), the
-- firewall and sealed secrets are composed by the mesh for each node from
-- the graph, the openings and the secret store. A module that carried one of
-- them would be a second path to the same act: its firewall beside the
-- composed one (two firewalls, or one id twice and the host refusing the
-- whole declaration), its wireguard outside the graph. Refused here, for
-- modules handed in and modules built alike (a build's result passes here).
create or replace function catalogue.put_module(module_name text, module_resources jsonb, module_origin text)
returns table (name text, version integer) language plpgsql as $$
declare
  bad text;
begin
  select string_agg(distinct e->>'kind', ', ') into bad
    from jsonb_array_elements(case when jsonb_typeof(module_resources) = 'array' then module_resources else '[]'::jsonb end) e
   where coalesce(e->>'kind', '') not in ('file', 'directory', 'service', 'container', 'opening');
  if bad is not null then
    raise exception 'module % carries % resources: a module may put files, directories, services, containers and openings on a node', module_name, bad
      using errcode = 'MSH31',
            hint = 'the mesh composes wireguard (mesh overlay), firewall (from openings) and secret (mesh secret) resources itself: take them out of the module and declare an opening or a secret instead';
  end if;
  return query
    insert into catalogue.module as m (name, resources, origin) values (module_name, module_resources, module_origin)
    on conflict on constraint module_pkey do update set
      resources = excluded.resources, origin = excluded.origin,
      version = case when m.resources = excluded.resources then m.version else m.version + 1 end,
      updated_at = case when m.resources = excluded.resources then m.updated_at else now() end
    returning m.name, m.version;
end $$;
comment on function catalogue.put_module(text, jsonb, text) is 'Store a module (a new version when its resources changed). Refuses kinds the mesh composes itself (MSH31).';
