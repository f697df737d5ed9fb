-- One code, one meaning (issue 16): grant raised MSH55 for four refusals and
-- MSH50 for "no provision named", which resolve_holders raises for "not
-- granted". Each is its own code now (MSH55-MSH59); every code and its remedy
-- is listed in src/store/errors.ts. A fact left out (no user, no port) is
-- refused too: the checks compared it as null, and null let it through.

/* Grant CONSUMER the use of PROVISION. A postgres grant names the database and
   the role of this pair alone (S5); a route grant names the host name served
   and the port on the consumer. Facts are checked here so a bad one is refused
   before any node is told. */
create or replace function provision.grant(provision_name text, consumer_module text, grant_facts jsonb)
returns text language plpgsql as $$
declare k text;
begin
  select kind into k from provision.provision where name = provision_name;
  if k is null then
    raise exception 'no provision named %', provision_name using errcode = 'MSH56', hint = 'offer it first: mesh provision offer';
  end if;
  if k = 'postgres' and not (coalesce(grant_facts->>'database', '') ~ '^[a-z_][a-z0-9_]{0,62}$'
                             and coalesce(grant_facts->>'user', '') ~ '^[a-z_][a-z0-9_]{0,62}$') then
    raise exception 'a postgres grant needs a database and a user of lower-case letters, digits and underscores' using errcode = 'MSH55',
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
