-- catalogue: where modules come from (their git source), the builds asked
-- for, what builders said while building, and the one answer each request
-- gets (B1). "Behind" and "where it runs" are computed here, from recorded
-- facts, so `mesh module list` and a DBA's `select * from
-- catalogue.module_status` give the same answer (B2).

create table catalogue.source (
  module       text primary key check (module ~ '^[a-z][a-z0-9-]{0,62}$'),
  git_url      text not null check (git_url <> '' and git_url !~ '^-' and length(git_url) <= 2000),
  path         text not null default '.' check (length(path) <= 500 and path ~ '^[A-Za-z0-9._/-]+$' and path !~ '(^|/)\.\.(/|$)' and path !~ '^/'),
  ref          text not null default 'HEAD' check (ref ~ '^[A-Za-z0-9._/-]{1,200}$' and ref !~ '^-'),
  head_commit  text check (head_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'),
  head_seen_at timestamptz,
  updated_at   timestamptz not null default now()
);
comment on table catalogue.source is 'A module''s git source: a builder clones it; its recorded head says whether the built module is behind.';
comment on column catalogue.source.module is 'The module built from it (the module row appears with the first successful build).';
comment on column catalogue.source.git_url is 'What a builder clones: a URL git understands, or a local path on the build machine.';
comment on column catalogue.source.path is 'The folder inside the repository holding the Containerfile; relative, never above the root.';
comment on column catalogue.source.ref is 'The branch or tag the module follows; HEAD is the repository''s default branch.';
comment on column catalogue.source.head_commit is 'The commit REF pointed at when last looked at (by a builder, or mesh module list --refresh).';
comment on column catalogue.source.head_seen_at is 'When head_commit was seen; an older sighting never overwrites a newer one.';
comment on column catalogue.source.updated_at is 'When the URL, path or ref last changed.';

create table catalogue.build_request (
  id           uuid primary key,
  module       text not null references catalogue.source (module) on delete cascade,
  ref          text not null check (ref ~ '^[A-Za-z0-9._/-]{1,200}$' and ref !~ '^-'),
  requested_at timestamptz not null default now(),
  state        text not null default 'requested' check (state in ('requested', 'building', 'built', 'failed'))
);
comment on table catalogue.build_request is 'A build asked for: recorded before it is published, so an answer always finds its request.';
comment on column catalogue.build_request.id is 'Also the correlation id of the request and of every message a builder sends about it.';
comment on column catalogue.build_request.module is 'The module to build from its source.';
comment on column catalogue.build_request.ref is 'What to build: a branch, a tag, a commit, or HEAD.';
comment on column catalogue.build_request.requested_at is 'When it was asked for.';
comment on column catalogue.build_request.state is 'requested: on the queue; building: a builder said it started; built or failed: answered (see build_result).';

create index build_request_module on catalogue.build_request (module, requested_at desc);

create table catalogue.build_progress (
  seq        bigint generated always as identity primary key,
  request_id uuid not null references catalogue.build_request (id) on delete cascade,
  builder    text not null,
  at         timestamptz not null default now(),
  line       text not null check (length(line) <= 2000)
);
comment on table catalogue.build_progress is 'What builders said while building: the requester prints these as they arrive. A builder that died mid-build leaves its lines here too.';
comment on column catalogue.build_progress.seq is 'Arrival order; the requester reads lines after the last seq it printed.';
comment on column catalogue.build_progress.request_id is 'The request it is about.';
comment on column catalogue.build_progress.builder is 'The builder account that said it (checked by the broker).';
comment on column catalogue.build_progress.at is 'When it was recorded.';
comment on column catalogue.build_progress.line is 'One line: started, a build step, pushing.';

create table catalogue.build_result (
  request_id  uuid primary key references catalogue.build_request (id) on delete cascade,
  builder     text not null,
  ok          boolean not null,
  commit_sha  text check (commit_sha ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'),
  image       text check (image ~ '^[A-Za-z0-9][A-Za-z0-9._/:-]{0,200}$'),
  digest      text check (digest ~ '^sha256:[0-9a-f]{64}$'),
  error       text check (length(error) <= 2000),
  log_tail    text check (length(log_tail) <= 16000),
  finished_at timestamptz not null default now(),
  check (not ok or (commit_sha is not null and image is not null and digest is not null)),
  check (ok or error is not null)
);
comment on table catalogue.build_result is 'The one answer a request gets. The primary key is the "exactly once": a redelivered request built again, or a second builder, finds the row taken.';
comment on column catalogue.build_result.request_id is 'The request answered.';
comment on column catalogue.build_result.builder is 'The builder whose answer was recorded.';
comment on column catalogue.build_result.ok is 'Built and pushed; false is a failure, which is an answer too.';
comment on column catalogue.build_result.commit_sha is 'The commit built (resolved from the request''s ref); set on failures too when the clone got that far.';
comment on column catalogue.build_result.image is 'The repository pushed to, without tag or digest: REGISTRY/MODULE.';
comment on column catalogue.build_result.digest is 'The manifest digest the registry holds; nodes run image@digest.';
comment on column catalogue.build_result.error is 'Why it failed, in one sentence.';
comment on column catalogue.build_result.log_tail is 'The end of the build''s output, for the requester to read.';
comment on column catalogue.build_result.finished_at is 'When the answer was recorded.';

/* Where a module's source is. Changing the URL or ref forgets the recorded
   head: it was the head of another thing. */
create function catalogue.set_source(module_name text, source_url text, source_path text, source_ref text)
returns void language sql as $$
  insert into catalogue.source as s (module, git_url, path, ref) values (module_name, source_url, source_path, source_ref)
  on conflict (module) do update set
    git_url = excluded.git_url, path = excluded.path, ref = excluded.ref, updated_at = now(),
    head_commit = case when (s.git_url, s.ref) = (excluded.git_url, excluded.ref) then s.head_commit end,
    head_seen_at = case when (s.git_url, s.ref) = (excluded.git_url, excluded.ref) then s.head_seen_at end
$$;

/* Record where the source's ref pointed, seen at a time. Sightings arrive out
   of order (a builder's, taken at clone time, may land after a later
   --refresh): the newest sighting wins, whatever order they are recorded in. */
create function catalogue.record_source_head(module_name text, commit_sha text, seen_at timestamptz)
returns boolean language sql as $$
  update catalogue.source set head_commit = commit_sha, head_seen_at = seen_at
   where module = module_name and (head_seen_at is null or head_seen_at <= seen_at)
  returning true
$$;

/* Record a build request before it is published: the answer must find it.
   Returns what the builder needs to know, which the request carries so a
   builder holds nothing but its broker credential. */
create function catalogue.request_build(request_id uuid, module_name text, build_ref text)
returns table (git_url text, path text, ref text, track text) language plpgsql as $$
declare s catalogue.source;
begin
  select * into s from catalogue.source where module = module_name;
  if not found then
    raise exception 'module % has no source to build from', module_name using errcode = 'MSH40',
      hint = 'say where it is first: mesh module source ' || module_name || ' --git URL';
  end if;
  insert into catalogue.build_request (id, module, ref) values (request_id, module_name, coalesce(build_ref, s.ref));
  return query select s.git_url, s.path, coalesce(build_ref, s.ref), s.ref;
end $$;

/* Take back a request that was recorded and then never published (the
   broker refused it): nobody will ever answer it. Only one still waiting. */
create function catalogue.withdraw_build_request(request_id uuid) returns boolean language sql as $$
  delete from catalogue.build_request r where r.id = request_id and r.state = 'requested'
     and not exists (select 1 from catalogue.build_result b where b.request_id = r.id)
  returning true
$$;

/* A line a builder said about a request it is working on. The first one moves
   the request to building. Lines about requests we never made are dropped
   (false): the broker checked who sent them, not what they are about. */
create function catalogue.record_build_progress(request_id uuid, builder_name text, progress_line text)
returns boolean language plpgsql as $$
begin
  update catalogue.build_request set state = 'building' where id = request_id and state = 'requested';
  if not exists (select 1 from catalogue.build_request where id = request_id) then return false; end if;
  insert into catalogue.build_progress (request_id, builder, line) values (request_id, builder_name, left(progress_line, 2000));
  return true;
end $$;

/* The answer to a request, recorded once (B1). A builder that died after
   answering and before acking, or a request redelivered to a second builder,
   brings a second answer: the primary key keeps the first and this says
   'duplicate'. A successful build, in the same transaction: the module's
   container image becomes image@digest (the version moves because the
   resources changed), its origin is built, and the source head the builder
   saw at clone time is recorded. */
create function catalogue.record_build_result(
  request_id uuid, builder_name text, build_ok boolean, commit_sha text, source_head text, head_seen_at timestamptz,
  image text, digest text, error text, log_tail text)
returns text language plpgsql as $$
declare
  req catalogue.build_request;
  current jsonb;
  ref text;
  replaced boolean := false;
  resource jsonb;
  updated jsonb := '[]'::jsonb;
begin
  select * into req from catalogue.build_request r where r.id = request_id for update;
  if not found then return 'unknown'; end if;
  insert into catalogue.build_result (request_id, builder, ok, commit_sha, image, digest, error, log_tail)
  values (req.id, builder_name, build_ok, commit_sha, image, digest, left(error, 2000), right(log_tail, 16000))
  on conflict on constraint build_result_pkey do nothing;
  if not found then return 'duplicate'; end if;
  update catalogue.build_request set state = case when build_ok then 'built' else 'failed' end where id = req.id;
  if source_head is not null then
    perform catalogue.record_source_head(req.module, source_head, head_seen_at);
  end if;
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

/* The machines each module runs on. assignment migrates after catalogue, so
   its placement view is named only inside this body, which PostgreSQL binds
   when it runs. Security definer so that whoever may read module_status sees
   placements without a grant on assignment of their own. */
create function catalogue.placements() returns table (module text, nodes text[])
language plpgsql stable security definer set search_path = pg_catalog as $$
begin
  return query select p.module, array_agg(p.node order by p.node) from assignment.placement p group by p.module;
end $$;

/* The last successful build of each module: what it was built from. */
create view catalogue.last_build as
  select distinct on (r.module) r.module, b.request_id, b.commit_sha, b.image, b.digest, b.finished_at, b.builder
    from catalogue.build_result b join catalogue.build_request r on r.id = b.request_id
   where b.ok
   order by r.module, b.finished_at desc, b.request_id;
comment on view catalogue.last_build is 'Each module''s latest successful build: commit, image and digest.';

create view catalogue.module_status as
  select coalesce(m.name, s.module) as module,
         m.version,
         case when m.name is null then 'not built yet' else m.origin end as origin,
         lb.commit_sha as built_commit,
         lb.digest,
         lb.image,
         lb.finished_at as built_at,
         s.git_url as source,
         s.ref as source_ref,
         s.head_commit as source_head,
         s.head_seen_at,
         -- Behind: the source's ref has been seen at a commit other than the
         -- one this module was last built from. Unknown (null) until both are recorded.
         case when s.head_commit is null or lb.commit_sha is null or m.origin is distinct from 'built' then null
              else s.head_commit <> lb.commit_sha end as behind,
         coalesce(p.nodes, '{}'::text[]) as nodes
    from catalogue.module m
    full join catalogue.source s on s.module = m.name
    left join catalogue.last_build lb on lb.module = coalesce(m.name, s.module)
    left join catalogue.placements() p on p.module = coalesce(m.name, s.module);
comment on view catalogue.module_status is 'The catalogue (B2): each module, its version, where it came from (built from a commit, handed over, shipped), whether it is behind its source, and the machines it runs on. mesh module list prints this.';
comment on column catalogue.module_status.origin is 'built, handed, shipped, or "not built yet" for a source never built.';
comment on column catalogue.module_status.behind is 'true: the source has moved past the built commit; false: current; null: not known (never built, handed over, or the source head never seen).';
comment on column catalogue.module_status.nodes is 'The machines assigned to run it.';

/* The state of one request and its answer, for the requester waiting on it. */
create view catalogue.build_status as
  select r.id, r.module, r.ref, r.state, r.requested_at, b.ok, b.builder, b.commit_sha, b.image, b.digest, b.error, b.log_tail, b.finished_at
    from catalogue.build_request r left join catalogue.build_result b on b.request_id = r.id;
comment on view catalogue.build_status is 'Each build request with its answer, if it has one.';
