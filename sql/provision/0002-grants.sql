-- provision: modules that provide something (a PostgreSQL database, a route
-- through a reverse proxy) and modules that consume it (S2, S5).
--
-- Each consumer-provider pair is a grant with its own credential, so rotating
-- one consumer touches one role, and who holds a credential is a query
-- (provision.affected_holders) rather than an assumption. The credential itself
-- is a made secret in the secret context, named provision/<provision>/<consumer>;
-- this context only says where each holder's copy goes.

create table provision.setting (
  only_row   boolean primary key default true check (only_row),
  files_root text not null default '/etc/mesh/provision' check (files_root ~ '^/([A-Za-z0-9._-]+/)*[A-Za-z0-9._-]+$')
);
comment on table provision.setting is 'The one row of this context''s settings.';
comment on column provision.setting.only_row is 'Always true: there is one row.';
comment on column provision.setting.files_root is 'Where binds and secrets are written on every node: <root>/uses/<consumer>/<provision>.{binds,secret} on a consumer, <root>/provides/<provision>/<consumer>.{binds,secret} on a provider. Each host must list it in MESH_HOST_ROOTS.';
insert into provision.setting default values;

create table provision.provision (
  name       text primary key check (name ~ '^[a-z][a-z0-9-]{0,62}$'),
  kind       text not null check (kind in ('postgres', 'route')),
  provider   text not null check (provider ~ '^[a-z][a-z0-9-]{0,62}$'),
  facts      jsonb not null default '{}' check (jsonb_typeof(facts) = 'object'),
  created_at timestamptz not null default now()
);
comment on table provision.provision is 'Something a module provides: a PostgreSQL database server, or routes through a reverse proxy.';
comment on column provision.provision.name is 'Its name; files on nodes are named after it.';
comment on column provision.provision.kind is 'postgres: a consumer supplies a database name and receives credentials. route: a consumer supplies a target port and receives a name the proxy serves.';
comment on column provision.provision.provider is 'The catalogue module that provides it; every node it is assigned to holds every consumer''s credential.';
comment on column provision.provision.facts is 'Readable facts the provider states, copied into every binds file: for postgres {host, port}; for routes {} or {scheme}.';
comment on column provision.provision.created_at is 'When it was offered.';

create table provision.grant (
  provision  text not null references provision.provision (name) on delete cascade,
  consumer   text not null check (consumer ~ '^[a-z][a-z0-9-]{0,62}$'),
  facts      jsonb not null check (jsonb_typeof(facts) = 'object'),
  granted_at timestamptz not null default now(),
  primary key (provision, consumer)
);
comment on table provision.grant is 'Module CONSUMER may use PROVISION: one pair, one credential (S5).';
comment on column provision.grant.provision is 'What is consumed.';
comment on column provision.grant.consumer is 'The catalogue module that consumes it.';
comment on column provision.grant.facts is 'The pair''s readable facts: for postgres {database, user}; for routes {name, port} (the name served, the port on the consumer).';
comment on column provision.grant.granted_at is 'When it was granted.';

/* Which module runs on which node. assignment is migrated after this context,
   so this reads assignment.placement at call time (plpgsql resolves names when
   it runs, not when it is created); sql/assignment/0002 grants the select. */
create function provision.placements() returns table (module text, node text) language plpgsql stable rows 20 as $$
begin
  return query select p.module, p.node from assignment.placement p;
end $$;

/* Where the mesh says a node is, for a provider that must open a connection to
   a consumer (a reverse proxy). The overlay owns addresses and is migrated
   after this context: when it offers overlay.address_of(text) that answer is
   used; until then the host of the node's dialable endpoint, else its name. */
create function provision.where_is(node_name text) returns text language plpgsql stable as $$
declare a text;
begin
  if to_regprocedure('overlay.address_of(text)') is not null then
    execute 'select overlay.address_of($1)' into a using node_name;
    if a is not null then return a; end if;
  end if;
  select coalesce(split_part(e.dialable, ':', 1), e.name) into a from inventory.enrolled_node e where e.name = node_name;
  return coalesce(a, node_name);
end $$;

/* The secret that is this pair's credential. Routes carry none. */
create function provision.secret_of(provision_name text, consumer_module text) returns text language sql immutable as $$
  select 'provision/' || provision_name || '/' || consumer_module
$$;

/* S5: who holds the credential of one pair. Every node the provider module
   runs on and every node the consumer module runs on; a node running both is
   one holder with both sides. sealing_key is null when the node is not
   enrolled (placed, then retired): such a holder cannot be resolved. */
create function provision.affected_holders(provision_name text, consumer_module text)
returns table (node text, sides text[], sealing_key text) language sql stable rows 4 as $$
  with g as (
    select p.name, p.provider, g.consumer from provision.grant g join provision.provision p on p.name = g.provision
     where g.provision = provision_name and g.consumer = consumer_module),
  s as (
    select pl.node, 'provider' as side from g join provision.placements() pl on pl.module = g.provider
    union all
    select pl.node, 'consumer' from g join provision.placements() pl on pl.module = g.consumer)
  select s.node, array_agg(distinct s.side order by s.side), encode((array_agg(e.sealing_key))[1], 'hex')
    from s left join inventory.enrolled_node e on e.name = s.node
   group by s.node order by s.node
$$;

/* The holders of a pair, refusing unless every one can be resolved: the first
   step of a rotation, so an unresolvable machine stops it before any value is
   made, stored or sent (S5: all or nothing). */
create function provision.resolve_holders(provision_name text, consumer_module text)
returns table (node text, sides text[], sealing_key text, secret text) language plpgsql stable as $$
declare missing text; n integer;
begin
  if not exists (select 1 from provision.grant g where g.provision = provision_name and g.consumer = consumer_module) then
    raise exception 'module % is not granted %', consumer_module, provision_name using errcode = 'MSH50',
      hint = 'see mesh provision list';
  end if;
  if (select kind from provision.provision where name = provision_name) <> 'postgres' then
    raise exception '% is a route: it has no credential', provision_name using errcode = 'MSH53',
      hint = 'routes carry names, not secrets; nothing to rotate';
  end if;
  select string_agg(h.node, ', '), count(*) into missing, n from provision.affected_holders(provision_name, consumer_module) h where h.sealing_key is null;
  if missing is not null then
    raise exception 'cannot resolve %: not enrolled, so nothing can be sealed to it', missing using errcode = 'MSH51',
      hint = 'nothing was sent and the old credential keeps working; enrol it again or unassign its module (mesh unassign MODULE NODE)';
  end if;
  select count(*) into n from provision.affected_holders(provision_name, consumer_module);
  if n = 0 then
    raise exception 'no node runs % or %', (select provider from provision.provision where name = provision_name), consumer_module
      using errcode = 'MSH52', hint = 'assign the provider and the consumer modules to nodes first (mesh assign MODULE NODE)';
  end if;
  return query select h.node, h.sides, h.sealing_key, provision.secret_of(provision_name, consumer_module)
                 from provision.affected_holders(provision_name, consumer_module) h;
end $$;

/* Offer a provision. Offering it again with other facts replaces the facts:
   the binds files change, the credentials do not. */
create function provision.offer(provision_name text, provision_kind text, provider_module text, provision_facts jsonb)
returns boolean language plpgsql as $$
begin
  insert into provision.provision as p (name, kind, provider, facts) values (provision_name, provision_kind, provider_module, provision_facts)
  on conflict (name) do update set facts = excluded.facts
    where p.kind = excluded.kind and p.provider = excluded.provider;
  if not found then
    raise exception 'provision % already exists with another kind or provider', provision_name using errcode = 'MSH54',
      hint = 'withdraw it first (mesh provision withdraw NAME), or choose another name';
  end if;
  return true;
end $$;

/* Grant CONSUMER the use of PROVISION. A postgres grant names the database and
   the role of this pair alone (S5); a route grant names the host name served
   and the port on the consumer. Facts are checked here so a bad one is refused
   before any node is told. */
create function provision.grant(provision_name text, consumer_module text, grant_facts jsonb)
returns text language plpgsql as $$
declare k text;
begin
  select kind into k from provision.provision where name = provision_name;
  if k is null then
    raise exception 'no provision named %', provision_name using errcode = 'MSH50', hint = 'offer it first: mesh provision offer';
  end if;
  if k = 'postgres' and not (grant_facts->>'database' ~ '^[a-z_][a-z0-9_]{0,62}$' and grant_facts->>'user' ~ '^[a-z_][a-z0-9_]{0,62}$') then
    raise exception 'a postgres grant needs a database and a user of lower-case letters, digits and underscores' using errcode = 'MSH55',
      hint = 'give --database NAME --user NAME';
  end if;
  if k = 'postgres' and exists (select 1 from provision.grant g where g.provision = provision_name and g.consumer <> consumer_module
                                   and g.facts->>'user' = grant_facts->>'user') then
    raise exception 'role % is already another consumer''s', grant_facts->>'user' using errcode = 'MSH55',
      hint = 'each pair has its own role: choose another --user';
  end if;
  if k = 'route' and not (grant_facts->>'name' ~ '^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$'
                          and (grant_facts->>'port') ~ '^[0-9]{1,5}$' and (grant_facts->>'port')::int between 1 and 65535) then
    raise exception 'a route grant needs a host name and a port on the consumer' using errcode = 'MSH55', hint = 'give --name HOST --port PORT';
  end if;
  if k = 'route' and exists (select 1 from provision.grant g where g.provision = provision_name and g.consumer <> consumer_module
                                and g.facts->>'name' = grant_facts->>'name') then
    raise exception 'the name % is already routed to another consumer', grant_facts->>'name' using errcode = 'MSH55', hint = 'choose another --name';
  end if;
  insert into provision.grant (provision, consumer, facts) values (provision_name, consumer_module, grant_facts)
  on conflict (provision, consumer) do update set facts = excluded.facts;
  return case when k = 'postgres' then provision.secret_of(provision_name, consumer_module) end;
end $$;

create function provision.revoke(provision_name text, consumer_module text) returns boolean language sql as $$
  delete from provision.grant where provision = provision_name and consumer = consumer_module returning true
$$;

create function provision.withdraw(provision_name text) returns boolean language sql as $$
  delete from provision.provision where name = provision_name returning true
$$;

create function provision.set_files_root(root text) returns text language sql as $$
  update provision.setting set files_root = root returning files_root
$$;

/* S3 and holder changes: pairs whose credential must be made again because a
   holder has no current copy (its sealing key changed, or its module was newly
   placed there and the mesh, which cannot read the value, cannot seal the old
   one to it). A pair that never had a credential is listed too. */
create view provision.stale_credentials as
select g.provision, g.consumer, provision.secret_of(g.provision, g.consumer) as secret,
       array_agg(h.node order by h.node) as holders_without_copy
  from provision.grant g
  join provision.provision p on p.name = g.provision and p.kind = 'postgres'
  cross join lateral provision.affected_holders(g.provision, g.consumer) h
 where not exists (select 1 from secret.held s where s.secret = provision.secret_of(g.provision, g.consumer)
                      and s.holder = h.node and s.current)
 group by g.provision, g.consumer;
comment on view provision.stale_credentials is 'Pairs with a holder lacking a current copy of their credential: they must be made again, for every holder at once.';

/* `mesh provision list`, and a DBA's answer to "who holds which credential". */
create view provision.grant_status as
select g.provision, p.kind, p.provider, g.consumer, g.facts, g.granted_at,
       coalesce((select array_agg(h.node order by h.node) from provision.affected_holders(g.provision, g.consumer) h), '{}') as holders,
       (select max(s.generation) from secret.held s where s.secret = provision.secret_of(g.provision, g.consumer)) as generation
  from provision.grant g join provision.provision p on p.name = g.provision;
comment on view provision.grant_status is 'Each pair: what, who provides, who consumes, the nodes that hold its credential, and its generation (never a value).';

/* S2: what this context puts on each node. Binds (readable facts) are plain
   files; the credential alone is a sealed secret file, placed only where the
   holder's copy is current. A provider gets a directory, one pair of files per
   consumer. Nothing is composed into a connection string here: the mesh cannot
   compose a document containing a value it discarded, and the node assembles
   its own. Binds are sorted-key JSON so the same truth gives the same bytes. */
create or replace view provision.node_resources as
-- The row estimates matter: a plpgsql set function is guessed at 1000 rows,
-- and the product of a few such guesses pushed this small query over the
-- JIT threshold, where compiling it took seconds on every compose.
with pairs as (
  select g.provision, g.consumer, p.kind, p.provider,
         p.facts || g.facts || jsonb_build_object('kind', p.kind, 'provision', g.provision, 'consumer', g.consumer) as facts
    from provision.grant g join provision.provision p on p.name = g.provision),
placed as (
  select pr.*, pl.node, 'provider' as side,
         (select files_root from provision.setting) || '/provides/' || pr.provision || '/' || pr.consumer as base
    from pairs pr join provision.placements() pl on pl.module = pr.provider
  union all
  select pr.*, pl.node, 'consumer',
         (select files_root from provision.setting) || '/uses/' || pr.consumer || '/' || pr.provision
    from pairs pr join provision.placements() pl on pl.module = pr.consumer),
binds as (
  select pd.node, pd.base,
         case when pd.side = 'provider' and pd.kind = 'route'
              then pd.facts || jsonb_build_object('upstreams', coalesce(
                     (select jsonb_agg(jsonb_build_object('node', cn.node, 'host', provision.where_is(cn.node)) order by cn.node)
                        from provision.placements() cn where cn.module = pd.consumer), '[]'::jsonb))
              else pd.facts end as facts,
         pd.kind, pd.provision, pd.consumer
    from placed pd)
select b.node,
       jsonb_build_object('id', 'file:' || b.base || '.binds', 'kind', 'file', 'path', b.base || '.binds', 'mode', '0644',
                          'content', translate(encode(convert_to(b.facts::text || E'\n', 'utf8'), 'base64'), E'\n', '')) as resource
  from binds b where b.facts is not null
union all
select b.node,
       jsonb_build_object('id', 'secret:' || b.base || '.secret', 'kind', 'secret', 'path', b.base || '.secret', 'mode', '0600', 'sealed', s.blob)
  from binds b
  join secret.held s on s.secret = provision.secret_of(b.provision, b.consumer) and s.holder = b.node and s.current
 where b.kind = 'postgres';
comment on view provision.node_resources is 'Binds and sealed secret files of every pair, on every node running either end (S2).';
