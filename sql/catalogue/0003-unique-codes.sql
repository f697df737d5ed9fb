-- One code, one meaning (issue 16): request_build raised MSH40, which the
-- secret context also raises for something else. catalogue's codes are 3x
-- now; every code and its remedy is listed in src/store/errors.ts.

/* Record a build request before it is published: the answer must find it.
   Returns what the builder needs to know, which the request carries so a
   builder holds nothing but its broker credential. */
create or replace function catalogue.request_build(request_id uuid, module_name text, build_ref text)
returns table (git_url text, path text, ref text, track text) language plpgsql as $$
declare s catalogue.source;
begin
  select * into s from catalogue.source where module = module_name;
  if not found then
    raise exception 'module % has no source to build from', module_name using errcode = 'MSH30',
      hint = 'say where it is first: mesh module source ' || module_name || ' --git URL';
  end if;
  insert into catalogue.build_request (id, module, ref) values (request_id, module_name, coalesce(build_ref, s.ref));
  return query select s.git_url, s.path, coalesce(build_ref, s.ref), s.ref;
end $$;
