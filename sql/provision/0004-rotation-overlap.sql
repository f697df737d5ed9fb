-- A rotation without a window (S5, issue 17). Until now the provider set the
-- new password when it applied, and the consumer's old one was refused from
-- then until the consumer applied its own file. Now every generation of a
-- pair's credential has a login role of its own (<user>-<generation>, a
-- member of the NOLOGIN group role <user> that owns the grants), and the
-- provider is declared every generation some holder may still be using:
-- from the newest one every holder acknowledged (the rotation's "settled"
-- generation) to the newest made. When every holder acknowledged the newest,
-- the provider's composition drops the others, W2 owes it a declaration, and
-- its provisioner drops their login roles: the old credential stops working
-- only then. A hyphen is not a letter a grant's user may hold, so no group
-- role of one pair is ever a login role of another.

/* The newest generation of SECRET_NAME that NODE_NAME acknowledged: the
   generation of its own blob found in its newest acknowledged declaration
   (assignment.acknowledged_sealed). Null when it acknowledged none. A
   function, so the view is read when called: assignment is migrated after
   this context and grants the select (sql/assignment/0009). Security
   definer, as this context: compose calls it as assignment, which may read
   neither the secret context's views nor, by design, need to. */
create function provision.acknowledged_generation(secret_name text, node_name text) returns integer
language plpgsql stable security definer set search_path = pg_catalog, pg_temp as $$
declare g integer;
begin
  select max(b.generation) into g
    from assignment.acknowledged_sealed a
    join (select h.generation, h.blob from secret.held h where h.secret = secret_name and h.holder = node_name
          union all
          select e.generation, e.blob from secret.held_earlier e where e.secret = secret_name and e.holder = node_name) b
      on b.blob = a.sealed
   where a.node = node_name;
  return g;
end $$;

/* Each pair's rotation (of the named secrets; every pair when null): its
   newest generation, its holders, the generation every holder acknowledged
   (settled; null while some holder acknowledged none), and who has not yet
   acknowledged the newest. The rotation is complete when settled equals
   generation. Security definer for the reason over acknowledged_generation. */
create function provision.settlement(secret_names text[])
returns table (provision text, consumer text, secret text, generation integer, holders text[], settled integer, waiting_for text[])
language sql stable security definer set search_path = pg_catalog, pg_temp rows 10 as $$
  with pairs as (
    select g.provision, g.consumer, provision.secret_of(g.provision, g.consumer) as secret
      from provision.grant g join provision.provision p on p.name = g.provision and p.kind = 'postgres'
     where secret_names is null or provision.secret_of(g.provision, g.consumer) = any(secret_names)),
  gens as (
    select pr.*, (select max(s.generation) from secret.held s where s.secret = pr.secret) as generation from pairs pr),
  acked as (
    select ge.provision, ge.consumer, ge.secret, ge.generation, h.node, provision.acknowledged_generation(ge.secret, h.node) as acknowledged
      from gens ge cross join lateral provision.affected_holders(ge.provision, ge.consumer) h
     where ge.generation is not null)
  select a.provision, a.consumer, a.secret, a.generation, array_agg(a.node order by a.node),
         case when bool_and(a.acknowledged is not null) then min(a.acknowledged) end,
         coalesce(array_agg(a.node order by a.node) filter (where a.acknowledged is distinct from a.generation), '{}')
    from acked a
   group by a.provision, a.consumer, a.secret, a.generation
$$;

create view provision.rotation as select * from provision.settlement(null);
comment on view provision.rotation is 'Each pair''s rotation: newest generation, holders, the generation every holder acknowledged (settled), and who has not acknowledged the newest (waiting_for). Complete when settled = generation.';

/* The rotations NODE_NAME holds a credential of that settled while copies of
   older generations are still kept: the report handler, having recorded the
   node's acknowledgement, re-declares what changed (W2) and then forgets
   those copies. Nothing kept earlier, nothing to compute: an index probe. */
create function provision.settled_by(node_name text) returns table (secret text, settled integer) language sql stable as $$
  select s.secret, s.settled
    from provision.settlement(array(select distinct e.secret from secret.held_earlier e
                                      join secret.held h on h.secret = e.secret and h.holder = node_name)) s
   where s.settled is not null
     and exists (select 1 from secret.held_earlier e where e.secret = s.secret and e.generation < s.settled)
$$;

/* Grant CONSUMER the use of PROVISION, as in 0003; a postgres user is at most
   52 characters now, because its login roles append -GENERATION and
   PostgreSQL cuts a name at 63 bytes (two generations cut to one name would
   be one role). */
create or replace function provision.grant(provision_name text, consumer_module text, grant_facts jsonb)
returns text language plpgsql as $$
declare k text;
begin
  select kind into k from provision.provision where name = provision_name;
  if k is null then
    raise exception 'no provision named %', provision_name using errcode = 'MSH56', hint = 'offer it first: mesh provision offer';
  end if;
  if k = 'postgres' and not (coalesce(grant_facts->>'database', '') ~ '^[a-z_][a-z0-9_]{0,62}$'
                             and coalesce(grant_facts->>'user', '') ~ '^[a-z_][a-z0-9_]{0,51}$') then
    raise exception 'a postgres grant needs a database and a user (at most 52 characters) of lower-case letters, digits and underscores' using errcode = 'MSH55',
      hint = 'give --database NAME --user NAME';
  end if;
  if k = 'postgres' and exists (select 1 from provision.grant g where g.provision = provision_name and g.consumer <> consumer_module
                                   and g.facts->>'user' = grant_facts->>'user') then
    raise exception 'role % is already another consumer''s', grant_facts->>'user' using errcode = 'MSH57',
      hint = 'each pair has its own role: choose another --user';
  end if;
  if k = 'route' and not (coalesce(grant_facts->>'name', '') ~ '^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$'
                          and coalesce(grant_facts->>'port', '') ~ '^[0-9]{1,5}$' and (grant_facts->>'port')::int between 1 and 65535) then
    raise exception 'a route grant needs a host name and a port on the consumer' using errcode = 'MSH58', hint = 'give --name HOST --port PORT';
  end if;
  if k = 'route' and exists (select 1 from provision.grant g where g.provision = provision_name and g.consumer <> consumer_module
                                and g.facts->>'name' = grant_facts->>'name') then
    raise exception 'the name % is already routed to another consumer', grant_facts->>'name' using errcode = 'MSH59', hint = 'choose another --name';
  end if;
  insert into provision.grant (provision, consumer, facts) values (provision_name, consumer_module, grant_facts)
  on conflict (provision, consumer) do update set facts = excluded.facts;
  return case when k = 'postgres' then provision.secret_of(provision_name, consumer_module) end;
end $$;

/* S2, as in 0002, with the overlap: a consumer is declared its newest copy
   and the login role it is for ("login" in its binds); a provider is declared
   its newest copy at <consumer>.secret and, while the rotation has not
   settled, each earlier generation from the settled one on at
   <consumer>.<generation>.secret, and its binds list every login role it must
   accept ("logins", newest first). A copy sealed to a key its holder no
   longer has is never declared. */
create or replace view provision.node_resources as
-- The row estimates matter: a plpgsql set function is guessed at 1000 rows,
-- and the product of a few such guesses pushed this small query over the
-- JIT threshold, where compiling it took seconds on every compose.
with pairs as (
  select g.provision, g.consumer, p.kind, p.provider, provision.secret_of(g.provision, g.consumer) as secret, g.facts->>'user' as usr,
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
-- Only rotations that keep earlier copies are settled here: none in flight, nothing read.
settling as (
  select s.secret, s.settled from provision.settlement(array(select distinct e.secret from secret.held_earlier e)) s),
copies as (
  select pd.node, pd.base, h.generation, h.blob, pd.base || '.secret' as path, pd.usr || '-' || h.generation as role
    from placed pd join secret.held h on h.secret = pd.secret and h.holder = pd.node and h.current
   where pd.kind = 'postgres'
  union all
  select pd.node, pd.base, e.generation, e.blob, pd.base || '.' || e.generation || '.secret', pd.usr || '-' || e.generation
    from placed pd
    join secret.held_earlier e on e.secret = pd.secret and e.holder = pd.node and e.current
    left join settling st on st.secret = pd.secret
   where pd.kind = 'postgres' and pd.side = 'provider' and e.generation >= coalesce(st.settled, 0)),
binds as (
  select pd.node, pd.base,
         case when pd.side = 'provider' and pd.kind = 'route'
              then pd.facts || jsonb_build_object('upstreams', coalesce(
                     (select jsonb_agg(jsonb_build_object('node', cn.node, 'host', provision.where_is(cn.node)) order by cn.node)
                        from provision.placements() cn where cn.module = pd.consumer), '[]'::jsonb))
              when pd.side = 'provider' and pd.kind = 'postgres'
              then pd.facts || jsonb_build_object('logins', coalesce(
                     (select jsonb_agg(jsonb_build_object('role', c.role, 'generation', c.generation, 'secret', c.path) order by c.generation desc)
                        from copies c where c.node = pd.node and c.base = pd.base), '[]'::jsonb))
              when pd.kind = 'postgres'
              then pd.facts || coalesce((select jsonb_build_object('login', c.role) from copies c
                                          where c.node = pd.node and c.base = pd.base and c.path = pd.base || '.secret'), '{}'::jsonb)
              else pd.facts end as facts
    from placed pd)
select b.node,
       jsonb_build_object('id', 'file:' || b.base || '.binds', 'kind', 'file', 'path', b.base || '.binds', 'mode', '0644',
                          'content', translate(encode(convert_to(b.facts::text || E'\n', 'utf8'), 'base64'), E'\n', '')) as resource
  from binds b where b.facts is not null
union all
select c.node, jsonb_build_object('id', 'secret:' || c.path, 'kind', 'secret', 'path', c.path, 'mode', '0600', 'sealed', c.blob)
  from copies c;
comment on view provision.node_resources is 'Binds and sealed secret files of every pair, on every node running either end (S2); a provider also holds each generation a holder may still use until the rotation settled (S5).';

/* `mesh provision list`, as in 0002, and whether each pair's rotation settled:
   the generation every holder acknowledged, and who the provider still keeps
   accepting an older credential for. */
create or replace view provision.grant_status as
select g.provision, p.kind, p.provider, g.consumer, g.facts, g.granted_at,
       coalesce((select array_agg(h.node order by h.node) from provision.affected_holders(g.provision, g.consumer) h), '{}') as holders,
       (select max(s.generation) from secret.held s where s.secret = provision.secret_of(g.provision, g.consumer)) as generation,
       r.settled, coalesce(r.waiting_for, '{}') as waiting_for
  from provision.grant g join provision.provision p on p.name = g.provision
  left join provision.settlement(null) r on r.provision = g.provision and r.consumer = g.consumer;
comment on view provision.grant_status is 'Each pair: what, who provides, who consumes, the nodes that hold its credential, its generation (never a value), the generation every holder acknowledged (settled) and who has not acknowledged the newest (waiting_for).';
