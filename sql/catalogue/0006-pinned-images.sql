-- B3: each module's images come from one registry and repository, the one the
-- control plane assigned to its source. A builder pushes where it is set up
-- to; a result naming any other repository is refused here, recorded as the
-- failed build it is, and the module keeps the image it had: a builder cannot
-- choose what every node runs.

alter table catalogue.source add column image text
  check (image ~ '^[A-Za-z0-9][A-Za-z0-9._/:-]{0,200}$' and image ~ '^[^/]+/[^/]');
comment on column catalogue.source.image is 'The registry and repository the module''s images come from (REGISTRY/REPOSITORY): a build result naming another is refused.';

-- A source set before there was an assignment keeps where its last build went; one never built, the builder's default.
update catalogue.source s
   set image = coalesce((select lb.image from catalogue.last_build lb where lb.module = s.module), '127.0.0.1:5000/' || s.module);
alter table catalogue.source alter column image set not null;

/* Where a module's source is, and the repository its images come from:
   given, or kept, or for a new source the builder's default registry
   (127.0.0.1:5000/MODULE). Changing the URL or ref forgets the recorded
   head: it was the head of another thing. */
drop function catalogue.set_source(text, text, text, text);
create function catalogue.set_source(module_name text, source_url text, source_path text, source_ref text, source_image text)
returns text language sql as $$
  insert into catalogue.source as s (module, git_url, path, ref, image)
  values (module_name, source_url, source_path, source_ref, coalesce(source_image, '127.0.0.1:5000/' || module_name))
  on conflict (module) do update set
    git_url = excluded.git_url, path = excluded.path, ref = excluded.ref, image = coalesce(source_image, s.image), updated_at = now(),
    head_commit = case when (s.git_url, s.ref) = (excluded.git_url, excluded.ref) then s.head_commit end,
    head_seen_at = case when (s.git_url, s.ref) = (excluded.git_url, excluded.ref) then s.head_seen_at end
  returning s.image
$$;

/* The answer to a request, recorded once (B1). A builder that died after
   answering and before acking, or a request redelivered to a second builder,
   brings a second answer: the primary key keeps the first and this says
   'duplicate'. A success naming an image repository other than the one
   assigned to the module's source is refused (B3): recorded as a failed
   build saying why, the module untouched, and this says 'refused'. A
   successful build, in the same transaction: the module's container image
   becomes image@digest (the version moves because the resources changed),
   its origin is built, and the source head the builder saw at clone time is
   recorded. */
create or replace function catalogue.record_build_result(
  request_id uuid, builder_name text, build_ok boolean, commit_sha text, source_head text, head_seen_at timestamptz,
  image text, digest text, error text, log_tail text)
returns text language plpgsql as $$
declare
  req catalogue.build_request;
  assigned text;
  refused boolean := false;
  current jsonb;
  ref text;
  replaced boolean := false;
  resource jsonb;
  updated jsonb := '[]'::jsonb;
begin
  select * into req from catalogue.build_request r where r.id = request_id for update;
  if not found then return 'unknown'; end if;
  select s.image into assigned from catalogue.source s where s.module = req.module;
  if build_ok and image is distinct from assigned then
    refused := true;
    build_ok := false;
    error := format('refused: the build names image repository %s, and module %s takes images only from %s', image, req.module, assigned);
  end if;
  insert into catalogue.build_result (request_id, builder, ok, commit_sha, image, digest, error, log_tail)
  values (req.id, builder_name, build_ok, commit_sha, image, digest, left(error, 2000), right(log_tail, 16000))
  on conflict on constraint build_result_pkey do nothing;
  if not found then return 'duplicate'; end if;
  update catalogue.build_request set state = case when build_ok then 'built' else 'failed' end where id = req.id;
  if source_head is not null then
    perform catalogue.record_source_head(req.module, source_head, head_seen_at);
  end if;
  if refused then return 'refused'; end if;
  if build_ok then
    ref := image || '@' || digest;
    current := coalesce((select m.resources from catalogue.module m where m.name = req.module), '[]'::jsonb);
    -- The module's own container (named after it) runs what was built; other
    -- resources a person handed over with it are kept as they are.
    for resource in select value from jsonb_array_elements(current) loop
      if resource->>'kind' = 'container' and resource->>'name' = req.module then
        resource := jsonb_set(resource, '{image}', to_jsonb(ref));
        replaced := true;
      end if;
      updated := updated || jsonb_build_array(resource);
    end loop;
    if not replaced then
      updated := updated || jsonb_build_array(jsonb_build_object('kind', 'container', 'id', 'container:' || req.module, 'name', req.module, 'image', ref));
    end if;
    perform catalogue.put_module(req.module, updated, 'built');
  end if;
  return 'recorded';
end $$;
