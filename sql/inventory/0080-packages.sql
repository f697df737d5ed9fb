-- The Debian packages each node runs, and the advisories (OSV) that name
-- versions of them: which nodes run an affected version is one join.
--
-- Versions compare as dpkg compares them (deb-version(7)): the epoch as a
-- number, then the upstream version, then the revision, each as alternating
-- runs of non-digits (compared character by character, '~' before the end of
-- the run, the end before a letter, a letter before any other character) and
-- digits (compared as numbers). Rather than a comparison called once a pair,
-- each version is turned once into a key whose byte order is dpkg's order:
-- stored beside the version, indexed, and compared by the ordinary bytea
-- operators, so "below the fixed version" is an index range, not a function
-- call on every row of every node.

/* One part (upstream or revision) as an order-preserving key. Each run of
   non-digits and the digits after it become: each character ('~' 01, a letter
   its ASCII code, anything else 80 plus its code), then 02 for the run's end,
   then the number as its length (one byte) and digits, leading zeros dropped.
   The part ends with 02: a longer part's next run starts with a character,
   which sorts against 02 as dpkg sorts it against the end. At least one run is
   written, so an empty part keys as "0", as dpkg compares them. */
create function inventory.debian_part_key(part text) returns text
language plpgsql immutable strict parallel safe as $$
declare
  m text[];
  hex text := '';
  c text;
  digits text;
  i integer;
begin
  for m in select regexp_matches(part, '([^0-9]*)([0-9]*)', 'g') loop
    exit when m[1] = '' and m[2] = '' and hex <> '';
    for i in 1 .. length(m[1]) loop
      c := substr(m[1], i, 1);
      hex := hex || case when c = '~' then '01' when c ~ '[A-Za-z]' then to_hex(ascii(c)) else to_hex(128 + ascii(c)) end;
    end loop;
    digits := ltrim(m[2], '0');
    hex := hex || '02' || lpad(to_hex(length(digits)), 2, '0') || encode(convert_to(digits, 'UTF8'), 'hex');
  end loop;
  return hex || '02';
end $$;
comment on function inventory.debian_part_key(text) is 'The upstream or revision part of a Debian version as hex of a key whose byte order is dpkg''s order.';

/* A Debian version as a key whose byte order is dpkg --compare-versions'
   order. Refused (MSHO0) when it is not a version dpkg accepts. */
create function inventory.debian_version_key(version text) returns bytea
language plpgsql immutable strict parallel safe as $$
declare
  epoch text := '';
  rest text := version;
  upstream text;
  revision text := '';
  cut integer;
begin
  if length(version) > 200 or version !~ '^([0-9]{1,9}:)?[0-9][A-Za-z0-9.+~:-]*$' or version ~ '-$'
     or (version ~ ':' and version !~ '^[0-9]{1,9}:') then
    raise exception '% is not a Debian version', quote_literal(version)
      using errcode = 'MSHO0',
            hint = 'a version is [EPOCH:]UPSTREAM[-REVISION], UPSTREAM starting with a digit, of letters, digits and . + ~ - : (deb-version(7))';
  end if;
  cut := position(':' in rest);
  if cut > 0 then
    epoch := ltrim(substr(rest, 1, cut - 1), '0');
    rest := substr(rest, cut + 1);
  end if;
  cut := length(rest) - position('-' in reverse(rest)) + 1;
  if position('-' in rest) > 0 then
    revision := substr(rest, cut + 1);
    rest := substr(rest, 1, cut - 1);
  end if;
  upstream := rest;
  return decode(lpad(to_hex(length(epoch)), 2, '0') || encode(convert_to(epoch, 'UTF8'), 'hex')
                || inventory.debian_part_key(upstream) || inventory.debian_part_key(revision), 'hex');
end $$;
comment on function inventory.debian_version_key(text) is 'A Debian version as a key whose byte order is dpkg''s: a < b exactly when dpkg --compare-versions a lt b.';

/* -1, 0 or 1 as dpkg --compare-versions says lt, eq or gt: what a DBA calls
   to compare two versions by hand. */
create function inventory.compare_debian_version(a text, b text) returns integer
language sql immutable strict parallel safe as $$
  select case when ka < kb then -1 when ka > kb then 1 else 0 end
    from (select inventory.debian_version_key(a) as ka, inventory.debian_version_key(b) as kb) k
$$;
comment on function inventory.compare_debian_version(text, text) is '-1, 0 or 1: A is lower than, equal to or higher than B as dpkg --compare-versions orders Debian versions.';

create table inventory.node_package (
  node        text not null references inventory.node (name) on delete cascade,
  name        text not null check (name ~ '^[a-z0-9][a-z0-9+.-]{0,127}$'),
  arch        text not null check (arch ~ '^[a-z0-9][a-z0-9-]{0,31}$'),
  version     text not null,
  source      text not null check (source ~ '^[a-z0-9][a-z0-9+.-]{0,127}$'),
  version_key bytea not null generated always as (inventory.debian_version_key(version)) stored,
  primary key (node, name, arch)
);
comment on table inventory.node_package is 'Each Debian package a node reported installed (its dpkg status), kept from the changes its reports carry.';
comment on column inventory.node_package.node is 'The node that runs it.';
comment on column inventory.node_package.name is 'The binary package''s name.';
comment on column inventory.node_package.arch is 'Its architecture (amd64, all, ...): one name may be installed for several.';
comment on column inventory.node_package.version is 'The version installed, as dpkg writes it.';
comment on column inventory.node_package.source is 'The source package it was built from (the name itself when dpkg names none): what Debian advisories name.';
comment on column inventory.node_package.version_key is 'The version as a key in dpkg''s order (inventory.debian_version_key).';
create index node_package_name on inventory.node_package (name, version_key);
create index node_package_source on inventory.node_package (source, version_key);

create table inventory.package_state (
  node       text primary key references inventory.node (name) on delete cascade,
  digest     text not null check (digest ~ '^[0-9a-f]{64}$'),
  packages   integer not null,
  changed_at timestamptz not null default now()
);
comment on table inventory.package_state is 'What the mesh holds of each node''s package list: its digest, which a node''s next change names as its base.';
comment on column inventory.package_state.node is 'The node.';
comment on column inventory.package_state.digest is 'sha256 hex of the list held (inventory.packages_digest): a change sent against another base is not applied.';
comment on column inventory.package_state.packages is 'How many packages the list holds.';
comment on column inventory.package_state.changed_at is 'When the list last changed.';

/* The digest of a node's list as the host computes it over its dpkg status
   (host/packages.ts): one line NAME TAB ARCH TAB VERSION TAB SOURCE a package,
   in byte order of name then architecture. */
create function inventory.packages_digest(node_name text) returns text language sql stable as $$
  select encode(sha256(convert_to(coalesce(string_agg(
           p.name || E'\t' || p.arch || E'\t' || p.version || E'\t' || p.source || E'\n', ''
           order by p.name collate "C", p.arch collate "C"), ''), 'UTF8')), 'hex')
    from inventory.node_package p where p.node = node_name
$$;

/* A node's packages, from one report: the whole list (base null) or the
   changes since the list whose digest is base (set: [name, arch, version,
   source], gone: [name, arch]). A change against another base than the one
   held is not applied, and a list that does not come out at the digest the
   node said is kept as it came out: either way the answer is 'resync', and
   the node is asked for its whole list. Otherwise 'full' or 'changed'. */
create function inventory.record_packages(node_name text, change jsonb) returns text language plpgsql as $$
declare
  held text;
  base text := change->>'base';
  result text;
begin
  select s.digest into held from inventory.package_state s where s.node = node_name for update;
  if base is not null and held is distinct from base then
    return 'resync';
  end if;
  if base is null then
    delete from inventory.node_package where node = node_name;
  else
    delete from inventory.node_package p
     using jsonb_array_elements(coalesce(change->'gone', '[]')) g
     where p.node = node_name and p.name = g->>0 and p.arch = g->>1;
  end if;
  insert into inventory.node_package (node, name, arch, version, source)
  select node_name, s->>0, s->>1, s->>2, coalesce(nullif(s->>3, ''), s->>0)
    from jsonb_array_elements(coalesce(change->'set', '[]')) s
  on conflict (node, name, arch) do update set version = excluded.version, source = excluded.source;
  held := inventory.packages_digest(node_name);
  insert into inventory.package_state (node, digest, packages)
  values (node_name, held, (select count(*) from inventory.node_package where node = node_name))
  on conflict (node) do update set digest = excluded.digest, packages = excluded.packages, changed_at = now();
  result := case when held is distinct from change->>'digest' then 'resync' when base is null then 'full' else 'changed' end;
  return result;
end $$;

create table inventory.advisory (
  id        text primary key check (id ~ '^[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}$'),
  summary   text not null default '',
  modified  text,
  loaded_at timestamptz not null default now(),
  document  jsonb not null
);
comment on table inventory.advisory is 'An advisory in the OSV format, loaded from a file (mesh advisories load): nothing is fetched.';
comment on column inventory.advisory.id is 'Its OSV id (DSA-5532-1, CVE-2023-5678, ...).';
comment on column inventory.advisory.summary is 'Its summary, or its details'' first line.';
comment on column inventory.advisory.modified is 'When its publisher last changed it, as the document says.';
comment on column inventory.advisory.loaded_at is 'When it was loaded here.';
comment on column inventory.advisory.document is 'The OSV document as loaded.';

create table inventory.advisory_range (
  advisory       text not null references inventory.advisory (id) on delete cascade,
  package        text not null,
  introduced     text not null,
  fixed          text,
  last_affected  text,
  introduced_key bytea not null generated always as (inventory.debian_version_key(introduced)) stored,
  fixed_key      bytea generated always as (inventory.debian_version_key(fixed)) stored,
  last_key       bytea generated always as (inventory.debian_version_key(last_affected)) stored,
  check (fixed is null or last_affected is null)
);
comment on table inventory.advisory_range is 'Each range of Debian versions an advisory says is affected: from introduced, up to (not including) fixed or up to and including last_affected; neither: every version from introduced.';
comment on column inventory.advisory_range.advisory is 'The advisory.';
comment on column inventory.advisory_range.package is 'The package it names: Debian''s advisories name the source package, matched against both a package''s source and its own name.';
comment on column inventory.advisory_range.introduced is 'The first version affected (0: every version before the fix).';
comment on column inventory.advisory_range.fixed is 'The first version not affected: what a rollout declares.';
comment on column inventory.advisory_range.last_affected is 'The last version affected, when the advisory names no fix.';
comment on column inventory.advisory_range.introduced_key is 'introduced in dpkg''s order.';
comment on column inventory.advisory_range.fixed_key is 'fixed in dpkg''s order.';
comment on column inventory.advisory_range.last_key is 'last_affected in dpkg''s order.';
create index advisory_range_package on inventory.advisory_range (package);

/* Load one OSV document, replacing an advisory of the same id. The ranges
   taken are those of a Debian ecosystem ("Debian", "Debian:12") of type
   ECOSYSTEM, read as OSV's events are (introduced opens a range; fixed or
   last_affected closes it), and the explicit versions list (each its own
   range). A document with no Debian package in it is refused (MSHO1): loading
   it would list nothing and look like good news. Returns the ranges kept. */
create function inventory.load_advisory(doc jsonb) returns integer language plpgsql as $$
declare
  advisory_id text := doc->>'id';
  a jsonb;
  r jsonb;
  e jsonb;
  v jsonb;
  opened text;
  n integer := 0;
begin
  if jsonb_typeof(doc) is distinct from 'object' or advisory_id is null
     or advisory_id !~ '^[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}$' then
    raise exception 'an advisory is an OSV document with an id, not %', left(coalesce(doc::text, 'null'), 80)
      using errcode = 'MSHO6', hint = 'give a file of one OSV document ({"id": ..., "affected": [...]}) or a list of them';
  end if;
  delete from inventory.advisory where id = advisory_id;
  insert into inventory.advisory (id, summary, modified, document)
  values (advisory_id, left(coalesce(doc->>'summary', split_part(doc->>'details', E'\n', 1), ''), 300), doc->>'modified', doc);
  for a in select x from jsonb_array_elements(case when jsonb_typeof(doc->'affected') = 'array' then doc->'affected' else '[]' end) x loop
    continue when coalesce(a->'package'->>'ecosystem', '') !~ '^Debian(:|$)' or coalesce(a->'package'->>'name', '') = '';
    for r in select x from jsonb_array_elements(case when jsonb_typeof(a->'ranges') = 'array' then a->'ranges' else '[]' end) x loop
      continue when r->>'type' is distinct from 'ECOSYSTEM';
      opened := null;
      for e in select x from jsonb_array_elements(case when jsonb_typeof(r->'events') = 'array' then r->'events' else '[]' end) x loop
        if e ? 'introduced' then
          if opened is not null then
            insert into inventory.advisory_range (advisory, package, introduced) values (advisory_id, a->'package'->>'name', opened);
            n := n + 1;
          end if;
          opened := e->>'introduced';
        elsif opened is not null and (e ? 'fixed' or e ? 'last_affected') then
          insert into inventory.advisory_range (advisory, package, introduced, fixed, last_affected)
          values (advisory_id, a->'package'->>'name', opened, e->>'fixed', e->>'last_affected');
          n := n + 1;
          opened := null;
        end if;
      end loop;
      if opened is not null then
        insert into inventory.advisory_range (advisory, package, introduced) values (advisory_id, a->'package'->>'name', opened);
        n := n + 1;
      end if;
    end loop;
    for v in select x from jsonb_array_elements(case when jsonb_typeof(a->'versions') = 'array' then a->'versions' else '[]' end) x loop
      insert into inventory.advisory_range (advisory, package, introduced, last_affected)
      values (advisory_id, a->'package'->>'name', v #>> '{}', v #>> '{}');
      n := n + 1;
    end loop;
  end loop;
  if n = 0 then
    raise exception 'advisory % names no Debian package version', advisory_id
      using errcode = 'MSHO1', hint = 'mesh reads the affected entries whose package.ecosystem is Debian (or Debian:N) with ECOSYSTEM ranges or a versions list';
  end if;
  return n;
end $$;

/* Each node running a version an advisory says is affected, with the fixed
   version a rollout would declare: the package's binary name or its source
   may be the one the advisory names (Debian's name the source). */
create view inventory.advisory_node as
with hit as (
  select r.advisory, r.package, r.fixed, p.node, p.name, p.arch, p.version
    from inventory.advisory_range r
    join inventory.node_package p on p.source = r.package
   where p.version_key >= r.introduced_key
     and (r.fixed_key is null or p.version_key < r.fixed_key)
     and (r.last_key is null or p.version_key <= r.last_key)
  union
  select r.advisory, r.package, r.fixed, p.node, p.name, p.arch, p.version
    from inventory.advisory_range r
    join inventory.node_package p on p.name = r.package and p.source <> r.package
   where p.version_key >= r.introduced_key
     and (r.fixed_key is null or p.version_key < r.fixed_key)
     and (r.last_key is null or p.version_key <= r.last_key))
select advisory, package, node, name, arch, version, fixed from hit;
comment on view inventory.advisory_node is 'Each node running a package version a loaded advisory says is affected, and the version that fixes it (null: no fix named).';

-- A rollout of an advisory's fix pins the fixed version on the nodes it lists (assignment.pin_advisory).
grant select on inventory.advisory, inventory.advisory_node to mesh_assignment;
