-- Issuing and spending tokens, hearing from nodes. The rules live here; the
-- control plane calls these and maps our error codes (MSH..) to sentences.

/* Issue a token for a node. A node not yet enrolled may be issued a new token,
   which replaces any unspent one; an enrolled node must be retired first, or
   one name would carry two identities. */
create function inventory.issue_token(node_name text, token_hash bytea, node_site text, node_dialable text, ttl interval)
returns timestamptz language plpgsql as $$
declare expires timestamptz := now() + ttl;
begin
  if ttl <= interval '0' then
    raise exception 'a token must live for some time, not %', ttl using errcode = 'MSH03';
  end if;
  insert into inventory.node (name, site, dialable) values (node_name, coalesce(node_site, 'default'), node_dialable)
  on conflict (name) do update set site = excluded.site, dialable = excluded.dialable
    where inventory.node.enrolled_at is null;
  if not found then
    raise exception 'node % is already enrolled', node_name using errcode = 'MSH02',
      hint = 'retire it first (mesh node retire NAME) if the machine is being rebuilt';
  end if;
  delete from inventory.token t where t.node = node_name and t.spent_at is null;
  insert into inventory.token (token_hash, node, expires_at) values (token_hash, node_name, expires);
  return expires;
end $$;

/* Spend a token and record the node's keys. E1: one statement finds and marks
   the token, so of any number of concurrent spends exactly one updates a row.
   E2: spend first, record keys second, the order things become irreversible.
   Returns 'enrolled', 'again' (the same identity asking twice: a redelivery),
   or the reason for refusing, which only the operator's log is told (E3). */
create function inventory.spend_token(token_hash bytea, node_name text, identity_key bytea, overlay_key bytea, sealing_key bytea)
returns text language plpgsql as $$
declare spent text; t inventory.token;
begin
  update inventory.token k set spent_at = now(), spent_by = spend_token.identity_key
   where k.token_hash = spend_token.token_hash and k.spent_at is null and k.expires_at > now() and k.node = node_name
  returning k.node into spent;
  if spent is not null then
    update inventory.node n set identity_key = spend_token.identity_key, overlay_key = spend_token.overlay_key,
           sealing_key = spend_token.sealing_key, enrolled_at = now(), last_seen = now()
     where n.name = spent;
    return 'enrolled';
  end if;
  select * into t from inventory.token k where k.token_hash = spend_token.token_hash;
  if not found then return 'unknown token'; end if;
  if t.node <> node_name then return 'token is for node ' || t.node; end if;
  if t.spent_at is not null then
    if t.spent_by = spend_token.identity_key then
      update inventory.node n set last_seen = now() where n.name = node_name;
      return 'again';
    end if;
    return 'token already spent';
  end if;
  return 'token expired';
end $$;

/* A node said it is there (R3): last_seen moves, nothing else. */
create function inventory.mark_heard(node_name text) returns boolean language sql as $$
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null returning true
$$;

/* The node's account of what it holds, kept as a backup (R2). */
create function inventory.record_report(node_name text, report_serial bigint, held_now jsonb, failed_now jsonb)
returns void language plpgsql as $$
begin
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null;
  if not found then
    raise exception 'no enrolled node %', node_name using errcode = 'MSH04';
  end if;
  -- A report resent after a lost link may arrive after a newer one: never go back.
  insert into inventory.report (node, serial, held, failed) values (node_name, report_serial, held_now, failed_now)
  on conflict (node) do update set serial = excluded.serial, held = excluded.held, failed = excluded.failed, reported_at = now()
    where excluded.serial >= inventory.report.serial;
end $$;

/* How long ago, the way a person says it: 40s, 4m, 3h, 2d. */
create function inventory.describe_age(age interval) returns text language sql immutable as $$
  select case
    when age < interval '1 minute' then floor(extract(epoch from age))::int || 's'
    when age < interval '1 hour'   then floor(extract(epoch from age) / 60)::int || 'm'
    when age < interval '1 day'    then floor(extract(epoch from age) / 3600)::int || 'h'
    else floor(extract(epoch from age) / 86400)::int || 'd' end
$$;

/* R4: the one answer to "which nodes are out of touch?", for `mesh node list`
   and for any DBA. A node says it is there once a minute; past 150 s without a
   word it is out of touch. "never spoken" is kept apart on purpose: that node
   never finished joining. */
create view inventory.node_status as
select n.name,
       n.site,
       n.dialable,
       case when n.last_seen is null then 'never spoken'
            when now() - n.last_seen <= interval '150 seconds' then 'here'
            else 'out of touch ' || inventory.describe_age(now() - n.last_seen) end as state,
       n.last_seen,
       now() - n.last_seen as silent_for,
       n.enrolled_at,
       r.serial as reported_serial,
       case when r.node is null then null else jsonb_array_length(r.held) end as holds,
       case when r.node is null then null else jsonb_array_length(r.failed) end as failing,
       r.reported_at,
       now() - r.reported_at as report_age
  from inventory.node n
  left join inventory.report r on r.node = n.name;
comment on view inventory.node_status is 'One row a node: here / out of touch Nm / never spoken, and the age of its last report (R2, R4).';

/* Heards arrive by the thousand a minute; serve records them in batches. */
create function inventory.mark_heard_many(node_names text[]) returns integer language sql as $$
  with moved as (
    update inventory.node set last_seen = now()
     where name = any(node_names) and enrolled_at is not null returning 1)
  select count(*)::int from moved
$$;

/* Retiring a node forgets it: keys, tokens, report. Its broker account and
   queue are removed by the control plane in the same command. */
create function inventory.retire_node(node_name text) returns boolean language sql as $$
  delete from inventory.node where name = node_name returning true
$$;

/* Granted to the contexts that need to know which nodes exist. */
create view inventory.enrolled_node as
select name, site, dialable, overlay_key, sealing_key, enrolled_at from inventory.node where enrolled_at is not null;
comment on view inventory.enrolled_node is 'Nodes that hold an identity: what other contexts may know of a node (public keys, site, endpoint).';
grant usage on schema inventory to mesh_assignment, mesh_overlay, mesh_secret, mesh_provision, mesh_catalogue;
grant select on inventory.enrolled_node to mesh_assignment, mesh_overlay, mesh_secret, mesh_provision, mesh_catalogue;
