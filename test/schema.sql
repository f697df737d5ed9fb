--
-- PostgreSQL database dump
--

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

--
-- Name: assignment; Type: SCHEMA; Schema: -; Owner: mesh_assignment
--

CREATE SCHEMA assignment;

ALTER SCHEMA assignment OWNER TO mesh_assignment;

--
-- Name: audit; Type: SCHEMA; Schema: -; Owner: mesh_audit
--

CREATE SCHEMA audit;

ALTER SCHEMA audit OWNER TO mesh_audit;

--
-- Name: catalogue; Type: SCHEMA; Schema: -; Owner: mesh_catalogue
--

CREATE SCHEMA catalogue;

ALTER SCHEMA catalogue OWNER TO mesh_catalogue;

--
-- Name: inventory; Type: SCHEMA; Schema: -; Owner: mesh_inventory
--

CREATE SCHEMA inventory;

ALTER SCHEMA inventory OWNER TO mesh_inventory;

--
-- Name: overlay; Type: SCHEMA; Schema: -; Owner: mesh_overlay
--

CREATE SCHEMA "overlay";

ALTER SCHEMA "overlay" OWNER TO mesh_overlay;

--
-- Name: provision; Type: SCHEMA; Schema: -; Owner: mesh_provision
--

CREATE SCHEMA provision;

ALTER SCHEMA provision OWNER TO mesh_provision;

--
-- Name: secret; Type: SCHEMA; Schema: -; Owner: mesh_secret
--

CREATE SCHEMA secret;

ALTER SCHEMA secret OWNER TO mesh_secret;

--
-- Name: abort_rollout(text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.abort_rollout(why text) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
declare r assignment.rollout := assignment.open_rollout();
begin
  if r.id is null or r.state = 'holding' then perform assignment.refuse_move(r, 'abort'); end if;
  perform assignment.take_declare_turn();
  update assignment.rollout_node n set restore_owed = true
   where n.rollout = r.id and n.released_at is not null
     and (select s.serial from assignment.node_serial s where s.node = n.node) > n.from_serial;
  update assignment.rollout set state = 'aborted', ended_at = now(), reason = coalesce(why, 'aborted by the operator') where id = r.id;
  insert into assignment.rollout default values;
  return r.id;
end $$;

ALTER FUNCTION assignment.abort_rollout(why text) OWNER TO mesh_assignment;

--
-- Name: acknowledge(text, bigint, bigint[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.acknowledge(node_name text, applied bigint, superseded bigint[]) RETURNS void
    LANGUAGE sql
    AS $$
  update assignment.declaration set acknowledged_at = coalesce(acknowledged_at, now())
   where node = node_name and serial = applied;
  update assignment.declaration set superseded_at = coalesce(superseded_at, now())
   where node = node_name and serial = any(superseded);
$$;

ALTER FUNCTION assignment.acknowledge(node_name text, applied bigint, superseded bigint[]) OWNER TO mesh_assignment;

--
-- Name: acknowledged_floor(text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.acknowledged_floor(node_name text) RETURNS TABLE(serial bigint, digest text)
    LANGUAGE sql STABLE
    AS $$
  select d.serial, encode(d.digest, 'hex')
    from assignment.declaration d
   where d.node = node_name and d.acknowledged_at is not null
   order by d.serial desc
   limit 1
$$;

ALTER FUNCTION assignment.acknowledged_floor(node_name text) OWNER TO mesh_assignment;

--
-- Name: add_freeze(timestamp with time zone, timestamp with time zone, text, text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.add_freeze(opens timestamp with time zone, closes timestamp with time zone, site_name text, module_name text) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
declare made bigint;
begin
  if opens is null or closes is null or closes <= opens then
    raise exception 'a freeze window from % until %: it must end after it begins', coalesce(opens::text, 'nothing'), coalesce(closes::text, 'nothing')
      using errcode = 'MSHQ9', hint = 'give both ends, the end after the start: mesh freeze add --from "2026-12-24 00:00" --until "2026-12-27 00:00"';
  end if;
  if closes <= now() then
    raise exception 'a freeze window that ended already (%)', closes
      using errcode = 'MSHB3', hint = 'give an --until in the future';
  end if;
  insert into assignment.freeze (from_at, until_at, site, module) values (opens, closes, site_name, module_name) returning id into made;
  return made;
end $$;

ALTER FUNCTION assignment.add_freeze(opens timestamp with time zone, closes timestamp with time zone, site_name text, module_name text) OWNER TO mesh_assignment;

--
-- Name: add_promise(text, text, text, text, text, text, text, integer, integer); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.add_promise(promise_name text, promise_kind text, site_name text, node_name text, peer_name text, module_name text, service_name text, port_number integer, hubs_at_least integer) RETURNS void
    LANGUAGE plpgsql
    AS $_$
declare why text;
begin
  if promise_name is null or promise_name !~ '^[a-z][a-z0-9-]{0,62}$' then
    raise exception 'a promise named %: not a name', coalesce(quote_literal(promise_name), 'nothing') using errcode = 'MSHB7',
      hint = 'name it with a lower-case letter then letters, digits or dashes: mesh promise add no-dmz-postgres --site dmz --closed 5432';
  end if;
  if promise_kind is null or not ((promise_kind = 'closed' and site_name is not null and port_number between 1 and 65535)
          or (promise_kind = 'reaches' and node_name is not null and peer_name is not null and port_number between 1 and 65535)
          or (promise_kind = 'runs' and module_name is not null and service_name is not null)
          or (promise_kind = 'hubs' and hubs_at_least >= 1)) then
    raise exception 'promise %: not one of the kinds mesh keeps', promise_name using errcode = 'MSHQ3',
      hint = 'one of: --site S --closed PORT; --node A --reaches B:PORT; --module M --runs SERVICE; --hubs N (at least 1)';
  end if;
  insert into assignment.promise (name, kind, site, node, peer, module, service, port, at_least)
  values (promise_name, promise_kind,
          case when promise_kind = 'closed' then site_name end,
          case when promise_kind = 'reaches' then node_name end,
          case when promise_kind = 'reaches' then peer_name end,
          case when promise_kind = 'runs' then module_name end,
          case when promise_kind = 'runs' then service_name end,
          case when promise_kind in ('closed', 'reaches') then port_number end,
          case when promise_kind = 'hubs' then hubs_at_least end)
  on conflict (name) do nothing;
  if not found then
    raise exception 'promise % exists already', promise_name using errcode = 'MSHQ4',
      hint = 'choose another name, or mesh promise remove it first (mesh promise list shows them)';
  end if;
  select b.why into why from assignment.broken_promises() b where b.name = promise_name;
  if why is not null then
    raise exception 'promise % is broken already: %', promise_name, why using errcode = 'MSHQ2',
      hint = 'nothing was kept; make it true first, then promise it';
  end if;
end $_$;

ALTER FUNCTION assignment.add_promise(promise_name text, promise_kind text, site_name text, node_name text, peer_name text, module_name text, service_name text, port_number integer, hubs_at_least integer) OWNER TO mesh_assignment;

--
-- Name: advance_rollout(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.advance_rollout() RETURNS TABLE(rollout bigint, state text, wave integer, undeclared text[])
    LANGUAGE plpgsql
    AS $$
declare r assignment.rollout; last_wave integer; bad text; late text; nfail integer;
begin
  select * into r from assignment.rollout o where o.state = 'rolling' for update;
  if r.id is null then return; end if;
  select max(n.wave) into last_wave from assignment.rollout_node n where n.rollout = r.id;
  if r.wave > 0 then
    select count(*), string_agg(format('%s: %s', s.node, s.why), '; ' order by s.position)
      into nfail, bad
      from assignment.rollout_node_state(r.id) s where s.state = 'failing';
    if nfail > r.max_failing then
      update assignment.rollout o set state = 'halted', reason = format('%s failing (at most %s allowed): %s', nfail, r.max_failing, bad) where o.id = r.id;
      return query select r.id, 'halted'::text, r.wave, '{}'::text[];
      return;
    end if;
    select string_agg(format('%s: %s', s.node, s.why), '; ' order by s.position) into late
      from assignment.rollout_node_state(r.id) s
     where s.wave <= r.wave and s.state in ('waiting', 'restoring');
    if late is not null then
      if now() - r.wave_started > r.wait_healthy then
        update assignment.rollout o set state = 'halted',
               reason = format('wave %s did not report healthy within %s: %s', r.wave, r.wait_healthy, late) where o.id = r.id;
        return query select r.id, 'halted'::text, r.wave, '{}'::text[];
        return;
      end if;
      return query select r.id, r.state, r.wave,
        coalesce((select array_agg(s.node order by s.position) from assignment.rollout_node_state(r.id) s
                   where s.wave <= r.wave and s.why = 'released, not yet declared'), '{}');
      return;
    end if;
    if r.wave >= last_wave then
      update assignment.rollout o set state = 'done', ended_at = now(), reason = null where o.id = r.id;
      return query select r.id, 'done'::text, r.wave, '{}'::text[];
      return;
    end if;
  end if;
  update assignment.rollout o set wave = r.wave + 1, wave_started = now(), reason = null where o.id = r.id;
  update assignment.rollout_node n set released_at = now() where n.rollout = r.id and n.wave = r.wave + 1;
  return query select r.id, 'rolling'::text, r.wave + 1,
    (select coalesce(array_agg(n.node order by n.position), '{}') from assignment.rollout_node n where n.rollout = r.id and n.wave = r.wave + 1);
end $$;

ALTER FUNCTION assignment.advance_rollout() OWNER TO mesh_assignment;

--
-- Name: affected_by_modules(text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.affected_by_modules(module_names text[]) RETURNS TABLE(node text)
    LANGUAGE sql STABLE
    AS $$
  select distinct a.node from assignment.assignment a where a.module = any(module_names)
$$;

ALTER FUNCTION assignment.affected_by_modules(module_names text[]) OWNER TO mesh_assignment;

--
-- Name: FUNCTION affected_by_modules(module_names text[]); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.affected_by_modules(module_names text[]) IS 'The nodes a change to these modules'' content can affect: those they are placed on (W2).';

--
-- Name: affected_nodes(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.affected_nodes() RETURNS TABLE(node text)
    LANGUAGE sql STABLE
    AS $$
  select c.node from assignment.compose_each(null) c where c.changed order by c.node
$$;

ALTER FUNCTION assignment.affected_nodes() OWNER TO mesh_assignment;

--
-- Name: FUNCTION affected_nodes(); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.affected_nodes() IS 'Enrolled nodes whose composition differs from their newest declaration (W2).';

--
-- Name: agent_holds_of(text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.agent_holds_of(node_names text[]) RETURNS TABLE(node text, kind text, agent_version text, first_version text)
    LANGUAGE sql STABLE
    AS $$
  -- No node is read while no kind needs a newer agent (most of the time).
  with n as materialized (
    select * from (select v.name, v.agent_version from inventory.node_agent_version v where node_names is null
                   union all select v.name, v.agent_version from inventory.node_agent_version v where v.name in (select unnest(node_names))) v
     where exists (select 1 from assignment.agent_feature)),
  old as (
    select v.agent_version, f.kind, f.first_version
      from (select distinct agent_version from n) v
      join assignment.agent_feature f
        on inventory.version_parts(v.agent_version) < inventory.version_parts(f.first_version))
  select n.name, o.kind, n.agent_version, o.first_version
    from n join old o on o.agent_version = n.agent_version
$$;

ALTER FUNCTION assignment.agent_holds_of(node_names text[]) OWNER TO mesh_assignment;

--
-- Name: FUNCTION agent_holds_of(node_names text[]); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.agent_holds_of(node_names text[]) IS 'agent_holds for the nodes named (null: every node).';

--
-- Name: agent_targets(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.agent_targets() RETURNS TABLE(node text, version text, sha256 text, size bigint)
    LANGUAGE sql STABLE
    AS $$
  select e.name, p.version, p.sha256, p.size
    from inventory.enrolled_node e
    cross join lateral (select t.version from assignment.agent_target t
                         where t.node = e.name or t.node = '' order by t.node = '' limit 1) t
    join catalogue.agent_packages p on p.version = t.version
$$;

ALTER FUNCTION assignment.agent_targets() OWNER TO mesh_assignment;

--
-- Name: allocate_serials(text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.allocate_serials(node_names text[]) RETURNS TABLE(node text, serial bigint)
    LANGUAGE sql
    AS $$
  insert into assignment.node_serial as s (node, serial)
  select n, 1 from unnest(node_names) n
  on conflict (node) do update set serial = s.serial + 1
  returning s.node, s.serial
$$;

ALTER FUNCTION assignment.allocate_serials(node_names text[]) OWNER TO mesh_assignment;

--
-- Name: assign(text, text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.assign(module_name text, node_name text) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
declare
  h record;
begin
  if not exists (select 1 from catalogue.module_resources where name = module_name) then
    raise exception 'no module named %', module_name using errcode = 'MSH20', hint = 'add it first: mesh module add FILE';
  end if;
  if not exists (select 1 from inventory.enrolled_node where name = node_name) then
    raise exception 'no enrolled node named %', node_name using errcode = 'MSH21', hint = 'see mesh node list';
  end if;
  select a.kind, a.agent_version, a.first_version into h
    from assignment.agent_holds a
   where a.node = node_name
     and a.kind in (select e.value->>'kind' from catalogue.module_resources m
                      cross join lateral jsonb_array_elements(m.resources) e where m.name = module_name)
   order by a.kind limit 1;
  if found then
    raise exception 'module % has % resources, and node % runs mesh-host %, which applies them from %',
      module_name, h.kind, node_name, h.agent_version, h.first_version
      using errcode = 'MSHV3', hint = 'upgrade mesh-host on ' || node_name || ' first; mesh node list --outdated lists the nodes behind';
  end if;
  insert into assignment.assignment (module, node) values (module_name, node_name) on conflict do nothing;
  return found;
end $$;

ALTER FUNCTION assignment.assign(module_name text, node_name text) OWNER TO mesh_assignment;

--
-- Name: broken_promises(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.broken_promises() RETURNS TABLE(name text, why text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET jit TO 'off'
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  with wanted as materialized (select exists (select 1 from assignment.promise p where p.kind in ('closed', 'reaches')) as yes),
  o as materialized (select f.* from assignment.firewall_openings(false) f where (select yes from wanted)
                       and (f.sources is null or cardinality(f.sources) > 0)),
  m as materialized (select x.name, x.site, host(x.address) as address, x.hub from overlay.member x),
  closed as (
    select p.name, (select format('%s of site %s opens %s %s (%s)', o.node, p.site, o.proto,
                                   o.port || coalesce('-' || o.port_to, ''), o.why)
                      from o join inventory.enrolled_node e on e.name = o.node
                     where e.site = p.site and p.port between o.port and coalesce(o.port_to, o.port)
                     order by o.node, o.port limit 1) as why
      from assignment.promise p where p.kind = 'closed'),
  reaches as (
    select p.name,
           case when a.name is null then format('%s is not in the overlay (not enrolled, or no address yet)', p.node)
                when b.name is null then format('%s is not in the overlay (not enrolled, or no address yet)', p.peer)
                when not exists (select 1 from overlay.peers_of(array[p.node]) x where x.peer = p.peer or x.route)
                  then format('no overlay path from %s to %s (no hub, and not direct peers)', p.node, p.peer)
                when not exists (select 1 from o where o.node = p.peer and p.port between o.port and coalesce(o.port_to, o.port)
                                    and (o.sources is null or a.address || '/32' = any(o.sources)))
                  then format('%s admits %s on no opening for port %s', p.peer, p.node, p.port) end as why
      from assignment.promise p
      left join m a on a.name = p.node
      left join m b on b.name = p.peer
     where p.kind = 'reaches'),
  runs as (
    select p.name, (select format('%s is assigned module %s and runs no service %s', a.node, p.module, p.service)
                      from assignment.assignment a
                     where a.module = p.module
                       and not exists (select 1 from assignment.assignment a2
                                         join catalogue.module_resources r on r.name = a2.module
                                         cross join lateral jsonb_array_elements(r.resources) x
                                        where a2.node = a.node and x->>'kind' = 'service' and x->>'name' = p.service)
                     order by a.node limit 1) as why
      from assignment.promise p where p.kind = 'runs'),
  hubs as (
    select p.name, case when c.n < p.at_least then format('%s hubs (%s), fewer than %s', c.n,
                                                          coalesce(c.names, 'none'), p.at_least) end as why
      from assignment.promise p
     cross join (select count(*)::int as n, string_agg(m.name, ', ' order by m.name) as names from m where m.hub) c
     where p.kind = 'hubs')
  select x.name, x.why from (select * from closed union all select * from reaches union all select * from runs union all select * from hubs) x
   where x.why is not null
$$;

ALTER FUNCTION assignment.broken_promises() OWNER TO mesh_assignment;

--
-- Name: FUNCTION broken_promises(); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.broken_promises() IS 'Every promise broken now and what breaks it (Q1): the one predicate the change check, mesh promise add and list read.';

--
-- Name: check_promises(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.check_promises() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare b record; what text := coalesce(current_setting('mesh.promise_change', true), '');
begin
  if what = '' or coalesce(current_setting('mesh.promises_checked', true), '') = 'yes' then return null; end if;
  perform set_config('mesh.promises_checked', 'yes', true);
  select x.name, x.why into b from assignment.broken_promises() x
   where x.name <> all(string_to_array(current_setting('mesh.promises_broken_before', true), ','))
   order by x.name limit 1;
  if b.name is not null then
    raise exception 'refused: % would break promise % (%): %', what, b.name,
      (select assignment.promise_text(p) from assignment.promise p where p.name = b.name), b.why
      using errcode = 'MSHQ1',
      hint = format('nothing was changed or sent; keep the promise, or remove it first: mesh promise remove %s', b.name);
  end if;
  return null;
end $$;

ALTER FUNCTION assignment.check_promises() OWNER TO mesh_assignment;

--
-- Name: compose(text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.compose(node_name text) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
  select coalesce((select c.resources::jsonb from assignment.compose_each(array[node_name]) c), '[]'::jsonb)
$$;

ALTER FUNCTION assignment.compose(node_name text) OWNER TO mesh_assignment;

--
-- Name: compose_each(text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.compose_each(node_names text[]) RETURNS TABLE(node text, resources text, resources_hash bytea, changed boolean)
    LANGUAGE plpgsql STABLE
    SET jit TO 'off'
    SET work_mem TO '64MB'
    AS $_$
begin
  return query execute $q$
  with want as materialized (
    select e.name as node, e.enrolled_at from inventory.enrolled_node e where $1 is null
    union all select e.name, e.enrolled_at from inventory.enrolled_node e where e.name in (select unnest($1))),
  held as materialized (select h.node, h.kind from assignment.agent_holds_of($1) h),
  -- One list for every node, or no row at all while inventory.broker is empty (0020).
  brokers as materialized (
    select jsonb_build_object('id', 'brokers', 'kind', 'brokers', 'brokers',
             jsonb_agg(jsonb_build_object('address', k.address, 'fingerprint', k.fingerprint) order by k.address)) as resource
      from inventory.broker_nodes k having count(*) > 0),
  j as (
    select a.node, e.value as resource
      from assignment.assignment a
      join want w on w.node = a.node
      join catalogue.module_resources m on m.name = a.module
      cross join lateral jsonb_array_elements(m.resources) e
     where e.value->>'kind' is distinct from 'opening'
    -- A context's view for a few names: each name looked up in it (offset 0 keeps the lookup a
    -- lookup; a join reads the view whole). For many, the view read once: its rows of nodes not
    -- wanted are dropped with want below.
    union all select x.node, x.resource from secret.node_resources x where $1 is null or cardinality($1) > 1000
    union all select x.node, x.resource from unnest($1) n
      cross join lateral (select * from secret.node_resources x where x.node = n offset 0) x where cardinality($1) <= 1000
    union all select x.node, x.resource from provision.node_resources x where $1 is null or cardinality($1) > 1000
    union all select x.node, x.resource from unnest($1) n
      cross join lateral (select * from provision.node_resources x where x.node = n offset 0) x where cardinality($1) <= 1000
    union all select f.node, f.resource from assignment.firewalls((select array_agg(node) from want)) f
    union all select w.node, b.resource from want w cross join brokers b
    union all select t.node, jsonb_build_object('id', 'agent', 'kind', 'agent', 'version', t.version,
                                                'sha256', t.sha256, 'size', t.size)
      from assignment.agent_targets() t join want w on w.node = t.node
    union all select p.node, jsonb_build_object('id', 'package:' || p.name, 'kind', 'package', 'name', p.name, 'version', p.version)
      from assignment.package_pin p join want w on w.node = p.node),
  r as (
    select j.node, j.resource->>'id' as id, j.resource->>'kind' as kind, j.resource::text as resource from j
    union all select x.node, x.id, split_part(x.id, ':', 1), x.resource
      from overlay.interface_texts_of((select array_agg(node) from want)) x),
  kept as (
    select r.node, r.id, r.resource from r
     where not exists (select 1 from held h where h.node = r.node and h.kind = r.kind)),
  c as (
    select w.node, w.enrolled_at, coalesce('[' || string_agg(k.resource, ', ' order by k.id) || ']', '[]') as resources
      from want w left join kept k on k.node = w.node
     group by w.node, w.enrolled_at)
  select c.node, c.resources, h.hash,
         h.hash is distinct from coalesce(
           (select d.resources_hash from assignment.declaration d
             where d.node = c.node and d.issued_at >= c.enrolled_at
             order by d.serial desc limit 1),
           sha256(convert_to('[]'::jsonb::text, 'utf8')))
    from c cross join lateral (select sha256(convert_to(c.resources, 'utf8')) as hash) h
   order by c.node
  $q$ using node_names;
end $_$;

ALTER FUNCTION assignment.compose_each(node_names text[]) OWNER TO mesh_assignment;

--
-- Name: FUNCTION compose_each(node_names text[]); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.compose_each(node_names text[]) IS 'What each node''s next declaration carries: resources (as the JSON text the declaration splices in), their sha256, and whether that differs from its newest declaration since it enrolled (never declared in this enrolment counts as declared empty). Null for every enrolled node.';

--
-- Name: composition_of(text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.composition_of(node_name text) RETURNS TABLE(id text, kind text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select e.value->>'id', e.value->>'kind'
    from jsonb_array_elements(coalesce(assignment.compose(node_name), '[]'::jsonb)) with ordinality e
   order by e.ordinality
$$;

ALTER FUNCTION assignment.composition_of(node_name text) OWNER TO mesh_assignment;

--
-- Name: FUNCTION composition_of(node_name text); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.composition_of(node_name text) IS 'The resources a node''s next declaration carries, by id and kind: what the console shows of them.';

--
-- Name: continue_serials(text, bigint); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.continue_serials(node_name text, applied bigint) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
begin
  if applied is null or applied < 0 or applied > 9007199254740991 - 1048576 then
    raise exception 'node % says it applied serial %, outside 0 to 2^53 - 2^20', node_name, applied
      using errcode = 'MSHR0', hint = 'a host reads serials as exact whole numbers: its serial.json is damaged; see mesh-host''s log';
  end if;
  if not exists (select 1 from assignment.declarable(array[node_name])) then
    return false; -- enrolled after the backup: unknown here, it enrols again
  end if;
  insert into assignment.node_serial as s (node, serial)
  select node_name, applied where applied > 0
  on conflict (node) do update set serial = excluded.serial where s.serial < excluded.serial;
  return coalesce((select max(d.serial) from assignment.declaration d where d.node = node_name), 0) < applied;
end $$;

ALTER FUNCTION assignment.continue_serials(node_name text, applied bigint) OWNER TO mesh_assignment;

--
-- Name: count_held_changes(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.count_held_changes() RETURNS integer
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select count(*)::int from assignment.compose_each(null) c join assignment.held_nodes() h on h.node = c.node where c.changed
$$;

ALTER FUNCTION assignment.count_held_changes() OWNER TO mesh_assignment;

--
-- Name: FUNCTION count_held_changes(); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.count_held_changes() IS 'The held nodes whose composition changed, that a release would declare.';

--
-- Name: declarable(text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.declarable(node_names text[]) RETURNS TABLE(node text)
    LANGUAGE sql STABLE
    AS $$
  select * from (select name from inventory.enrolled_node where node_names is null
                 union all
                 select name from inventory.enrolled_node where name = any(node_names)) d
   order by 1
$$;

ALTER FUNCTION assignment.declarable(node_names text[]) OWNER TO mesh_assignment;

--
-- Name: declare_turn_key(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.declare_turn_key() RETURNS bigint
    LANGUAGE sql IMMUTABLE
    AS $$
  select hashtext('mesh assignment declare')::bigint
$$;

ALTER FUNCTION assignment.declare_turn_key() OWNER TO mesh_assignment;

--
-- Name: FUNCTION declare_turn_key(); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.declare_turn_key() IS 'The advisory lock every declare takes before it composes (the declare turn).';

--
-- Name: declared_at(text[], timestamp with time zone); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.declared_at(node_names text[], at timestamp with time zone) RETURNS TABLE(node text, serial bigint, issued_at timestamp with time zone, resources jsonb, applied_serial bigint, applied_at timestamp with time zone, applied_resources jsonb)
    LANGUAGE sql STABLE
    SET jit TO 'off'
    AS $$
  with n as (select s.node from assignment.node_serial s where node_names is null or s.node = any(node_names)),
  -- The serials first, the envelopes read only for the one chosen a node.
  dec as (
    select distinct on (d.node) d.node, d.serial, d.issued_at
      from assignment.declaration d join n on n.node = d.node
     where d.issued_at <= at order by d.node, d.serial desc),
  app as (
    select distinct on (d.node) d.node, d.serial, d.acknowledged_at
      from assignment.declaration d join n on n.node = d.node
     where d.acknowledged_at <= at order by d.node, d.serial desc)
  select n.node, dec.serial, dec.issued_at, (select assignment.resources_of(x.envelope) from assignment.declaration x
                                              where x.node = dec.node and x.serial = dec.serial),
         app.serial, app.acknowledged_at, (select assignment.resources_of(x.envelope) from assignment.declaration x
                                            where x.node = app.node and x.serial = app.serial)
    from n left join dec on dec.node = n.node left join app on app.node = n.node
   order by n.node
$$;

ALTER FUNCTION assignment.declared_at(node_names text[], at timestamp with time zone) OWNER TO mesh_assignment;

--
-- Name: FUNCTION declared_at(node_names text[], at timestamp with time zone); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.declared_at(node_names text[], at timestamp with time zone) IS 'Each node''s declaration as of a time (serial, when issued, its resources) and the newest it had reported applied by then; null where there was none yet.';

--
-- Name: declared_changes(text[], timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.declared_changes(node_names text[], from_at timestamp with time zone, to_at timestamp with time zone) RETURNS TABLE(node text, from_serial bigint, to_serial bigint, id text, change text)
    LANGUAGE sql STABLE
    SET jit TO 'off'
    AS $$
  select t.node, f.serial, t.serial, c.id, c.change
    from assignment.declared_at(node_names, to_at) t
    join assignment.declared_at(node_names, from_at) f on f.node = t.node
   cross join lateral assignment.resource_changes(f.resources, t.resources) c
   order by t.node, c.id, c.change
$$;

ALTER FUNCTION assignment.declared_changes(node_names text[], from_at timestamp with time zone, to_at timestamp with time zone) OWNER TO mesh_assignment;

--
-- Name: FUNCTION declared_changes(node_names text[], from_at timestamp with time zone, to_at timestamp with time zone); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.declared_changes(node_names text[], from_at timestamp with time zone, to_at timestamp with time zone) IS 'What each node''s declaration changed between two times, as plan_changes says it: added, changed, removed, restarts.';

--
-- Name: declared_changes_summary(text[], timestamp with time zone, timestamp with time zone); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.declared_changes_summary(node_names text[], from_at timestamp with time zone, to_at timestamp with time zone) RETURNS TABLE(nodes bigint, changes text[], sample text[])
    LANGUAGE sql STABLE
    AS $$
  with per as (
    select p.node, array_agg(p.id || ' ' || p.change order by p.id, p.change) as changes
      from assignment.declared_changes(node_names, from_at, to_at) p group by p.node)
  select count(*), per.changes, (array_agg(per.node order by per.node))[1:5]
    from per group by per.changes
   order by count(*) desc, per.changes
$$;

ALTER FUNCTION assignment.declared_changes_summary(node_names text[], from_at timestamp with time zone, to_at timestamp with time zone) OWNER TO mesh_assignment;

--
-- Name: due_for_resigning(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.due_for_resigning() RETURNS TABLE(node text)
    LANGUAGE sql STABLE
    AS $$
  select f.node from assignment.declaration_freshness f
   where f.expires_at is null
      or f.expires_at - (f.expires_at - f.signed_at) / 2 <= now()
   order by f.node
$$;

ALTER FUNCTION assignment.due_for_resigning() OWNER TO mesh_assignment;

--
-- Name: end_freezes(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.end_freezes() RETURNS TABLE(id bigint, until_at timestamp with time zone)
    LANGUAGE sql
    AS $$
  update assignment.freeze f set ended_at = now()
   where f.ended_at is null and (f.until_at <= now() or f.overridden_at is not null)
  returning f.id, f.until_at
$$;

ALTER FUNCTION assignment.end_freezes() OWNER TO mesh_assignment;

--
-- Name: expires_now(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.expires_now() RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
  select date_trunc('second', now()) + date_trunc('second', (select lifetime from assignment.freshness_setting))
$$;

ALTER FUNCTION assignment.expires_now() OWNER TO mesh_assignment;

--
-- Name: explain_path(text, text, integer); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.explain_path(from_node text, to_node text, port integer DEFAULT NULL::integer) RETURNS TABLE(fact text, detail text, remedy text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  a record; b record; e record; x record;
  ha text; hb text; vias text[] := '{}'; hops text[]; addr text; admits text; would text; issued timestamptz; owed bigint;
  hop text; hub_is text;
begin
  perform overlay.check_members(array[from_node, to_node]);
  if from_node = to_node then
    raise exception 'a path needs two nodes: % and %', from_node, to_node using errcode = 'MSHY2',
      hint = 'name two different nodes: mesh overlay why FROM TO';
  end if;
  if port is not null and port not between 1 and 65535 then
    raise exception 'port % is not a port number', port using errcode = 'MSHY3', hint = 'give a TCP port from 1 to 65535';
  end if;
  select * into a from overlay.route_members(null) r where r.node = from_node;
  select * into b from overlay.route_members(null) r where r.node = to_node;

  -- The graph: peers, or through the hubs: each end that is a spoke sends
  -- through its route hub, and the hubs (peers of each other, carrying each
  -- other's blocks) pass it on.
  if not overlay.peered(a.node, a.hub, a.route_now, a.site, a.dialable, b.node, b.hub, b.route_now, b.site, b.dialable) then
    ha := case when a.hub then a.node else a.route_now end;
    hb := case when b.hub then b.node else b.route_now end;
    if ha is null or hb is null then
      return query select 'no edge'::text,
        format('%s and %s are not peers (%s), and no hub carries them (%s routes through %s, %s through %s)',
               from_node, to_node,
               case when a.site <> b.site then format('sites %s and %s', a.site, b.site) else format('site %s, neither dialable', a.site) end,
               from_node, coalesce(ha, 'no hub'), to_node, coalesce(hb, 'no hub')),
        'name a dialable node a hub (mesh overlay hub NODE), or give one end a dialable address at the other''s site'::text;
      return;
    end if;
    vias := array_remove(array[case when ha <> from_node then ha end, case when hb <> to_node and hb <> ha then hb end], null);
  end if;
  hops := array[from_node] || vias || array[to_node];
  hub_is := case when cardinality(vias) = 1 then 'the hub between them, ' else 'a hub between them, ' end;

  -- The firewall: an opening of PORT on TO_NODE that admits FROM_NODE's overlay address.
  if port is not null then
    select f.address into addr from overlay.firewall_members(false) f where f.node = from_node;
    if not exists (select 1 from assignment.firewall_openings(false) o
                    where o.node = to_node and o.proto = 'tcp' and explain_path.port between o.port and coalesce(o.port_to, o.port)
                      and (o.sources is null or addr = any(o.sources))) then
      select string_agg(o.reason, '; ' order by o.reason) into admits
        from assignment.firewall_openings(false) o
       where o.node = to_node and o.proto = 'tcp' and explain_path.port between o.port and coalesce(o.port_to, o.port);
      select string_agg(format('module %s opens it from %s (mesh assign %s %s)', m.name, coalesce(r.value->>'from', 'any'), m.name, to_node), '; ' order by m.name)
        into would
        from catalogue.module_resources m
        cross join lateral jsonb_array_elements(m.resources) r
       where r.value->>'kind' = 'opening' and coalesce(r.value->>'proto', 'tcp') = 'tcp'
         and explain_path.port between (r.value->>'port')::int and coalesce((r.value->>'to')::int, (r.value->>'port')::int)
         and not exists (select 1 from assignment.assignment p where p.module = m.name and p.node = to_node);
      return query select 'no opening'::text,
        format('%s admits nothing on tcp %s from %s (%s)', to_node, port, from_node, coalesce(addr, 'no overlay address')),
        case when admits is not null then format('the rules on that port admit others only: %s. Place %s where one of them admits it (the consumer module, the site, the module named)', admits, from_node)
             when would is not null then format('no rule on %s opens it; %s', to_node, would)
             else format('no module, site or provision rule opens tcp %s on %s: add an opening to a module on %s, or offer a provision there and grant it to a module on %s', port, to_node, to_node, from_node) end;
      return;
    end if;
  end if;

  -- The ends and the hubs between them: in touch, holding a live declaration, applying it.
  foreach hop in array hops loop
    select * into e from inventory.path_end p where p.name = hop;
    if e.state not in ('here', 'wedged') then
      return query select 'end out of touch'::text,
        format('%s%s is %s', case when hop = any(vias) then hub_is else '' end, hop, e.state),
        format('bring %s back: its mesh-host must run and reach the broker (mesh node show %s)', hop, hop);
      return;
    elsif e.stale then
      return query select 'end stale'::text,
        format('%s%s holds a declaration that has expired', case when hop = any(vias) then hub_is else '' end, hop),
        format('declare it again (mesh declare %s); a host with an expired declaration reports stale', hop);
      return;
    elsif e.failing > 0 then
      return query select 'end failing'::text,
        format('%s%s could not finish its last apply (%s resource(s) failing)', case when hop = any(vias) then hub_is else '' end, hop, e.failing),
        format('see what failed: mesh node show %s', hop);
      return;
    end if;
  end loop;

  -- Keys: each holder on the path must have applied a declaration issued after its neighbour's key last changed.
  for x in select h.holder, h.peer
             from generate_series(1, cardinality(hops) - 1) i
             cross join lateral (values (1, hops[i], hops[i + 1]), (2, hops[i + 1], hops[i])) h(k, holder, peer)
            order by i, h.k
  loop
    select * into e from inventory.path_end p where p.name = x.peer;
    continue when e.overlay_key_at is null;
    select d.issued_at into issued from assignment.declaration d
      join inventory.path_end p on p.name = d.node and p.reported_serial = d.serial
     where d.node = x.holder;
    if issued is null or issued < e.overlay_key_at then
      select min(ob.serial) into owed from assignment.outbox ob where ob.node = x.holder and ob.delivered_at is null;
      return query select 'key not applied'::text,
        format('%s''s overlay key changed at %s; %s has not applied a declaration issued since, so it still holds the old key',
               x.peer, to_char(e.overlay_key_at, 'YYYY-MM-DD HH24:MI:SS'), x.holder),
        case when owed is not null then format('its declaration #%s is owed and not delivered: mesh serve delivers the outbox (mesh outbox)', owed)
             else format('its declaration is delivered and not yet applied: see mesh node show %s', x.holder) end;
      return;
    end if;
  end loop;

  -- Delivery: nothing owed to an end or a hub between them (W1).
  select ob.node, ob.serial, ob.created_at, ob.attempts, ob.last_error into x from assignment.outbox ob
   where ob.node = any(hops) and ob.delivered_at is null
   order by ob.id limit 1;
  if found then
    return query select 'declaration owed'::text,
      format('%s is owed declaration #%s since %s, not yet delivered (%s attempt(s)%s)', x.node, x.serial,
             to_char(x.created_at, 'YYYY-MM-DD HH24:MI:SS'), x.attempts, coalesce(': ' || x.last_error, '')),
      'mesh serve delivers the outbox: see that it runs and reaches the broker (mesh outbox)'::text;
    return;
  end if;

  return query select 'path open'::text,
    case cardinality(vias) when 0 then format('%s and %s are peers', from_node, to_node)
         when 1 then format('%s reaches %s through hub %s', from_node, to_node, vias[1])
         else format('%s reaches %s through hubs %s and %s', from_node, to_node, vias[1], vias[2]) end
      || case when port is not null then format('; %s admits tcp %s from %s', to_node, port, from_node) else '' end,
    null::text;
end $$;

ALTER FUNCTION assignment.explain_path(from_node text, to_node text, port integer) OWNER TO mesh_assignment;

--
-- Name: FUNCTION explain_path(from_node text, to_node text, port integer); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.explain_path(from_node text, to_node text, port integer) IS 'The first fact that blocks FROM_NODE reaching TO_NODE (on TCP PORT when given), along the path the hub groups give it (through one hub or two): no edge, no opening, end out of touch, end stale, end failing, key not applied, declaration owed; or path open. One row: fact, detail, remedy (Q2).';

--
-- Name: firewall_openings(boolean); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.firewall_openings(with_reasons boolean) RETURNS TABLE(node text, proto text, port integer, port_to integer, sources text[], via text, why text, origin text, reason text)
    LANGUAGE sql STABLE
    AS $$
  select * from assignment.firewall_openings_of(null, with_reasons)
$$;

ALTER FUNCTION assignment.firewall_openings(with_reasons boolean) OWNER TO mesh_assignment;

--
-- Name: FUNCTION firewall_openings(with_reasons boolean); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.firewall_openings(with_reasons boolean) IS 'Every opening in every node''s firewall (X2), as assignment.firewall_opening, broker nodes'' TLS, epmd and distribution openings among them; with_reasons false leaves the WireGuard opening''s reason null and does not compute the peer graph.';

--
-- Name: firewall_openings_of(text[], boolean); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.firewall_openings_of(node_names text[], with_reasons boolean) RETURNS TABLE(node text, proto text, port integer, port_to integer, sources text[], via text, why text, origin text, reason text)
    LANGUAGE plpgsql STABLE
    SET jit TO 'off'
    AS $_$
begin
  return query execute $q$
  -- Two branches, not one with an OR: the OR kept the planner from looking names up.
  with want as materialized (
    select e.name as node from inventory.enrolled_node e where $1 is null
    union all select e.name from inventory.enrolled_node e where e.name in (select unnest($1))),
-- The named nodes' own files, looked up for a few (as compose_each does), read whole for many.
own as (
  select x.node, x.resource from provision.node_resources x where $1 is null or cardinality($1) > 1000
  union all select x.node, x.resource from unnest($1) n
    cross join lateral (select * from provision.node_resources x where x.node = n offset 0) x where cardinality($1) <= 1000),
binds as materialized (
  select x.node, x.resource->>'path' as path,
         convert_from(decode(x.resource->>'content', 'base64'), 'utf8')::jsonb as facts
    from own x
   where x.resource->>'kind' = 'file' and x.resource->>'path' like '%.binds'),
-- The providers' binds a route's sources are read from: every node's, read only when a node
-- asked for uses a route (for many, binds is already every node's).
provides as materialized (
  select * from binds where $1 is null or cardinality($1) > 1000
  union all
  select x.node, x.resource->>'path', convert_from(decode(x.resource->>'content', 'base64'), 'utf8')::jsonb
    from provision.node_resources x
   where cardinality($1) <= 1000 and exists (select 1 from binds c where c.facts->>'kind' = 'route' and c.path like '%/uses/%')
     and x.resource->>'kind' = 'file' and x.resource->>'path' like '%/provides/%.binds'),
placed as (select a.module, a.node from assignment.assignment a),
ssh as (
  select e.name as node, 'tcp'::text as proto, overlay.ssh_port() as port, null::int as port_to,
         null::text[] as sources, null::text as via, 'ssh' as why, 'base' as origin,
         'ssh, so an operator is never locked out (overlay.firewall_setting.ssh_port)' as reason
    from (select w.node as name from want w) e),
opening as (
  select pl.node, o.value->>'proto' as proto, (o.value->>'port')::int as port, (o.value->>'to')::int as port_to,
         o.value->>'from' as "from", o.value->>'name' as name, pl.module, o.value->>'why' as why
    from placed pl
    join catalogue.module_resources m on m.name = pl.module
    cross join lateral jsonb_array_elements(m.resources) o
   where o.value->>'kind' = 'opening' and pl.node in (select node from want)),
-- Broker nodes: the mesh nodes named in inventory.broker_nodes.node.
bn as materialized (
  select b.node, b.address, substring(b.address from ':([0-9]{1,5})$')::int as amqps
    from inventory.broker_nodes b join inventory.enrolled_node e on e.name = b.node),
broker_tls as (
  -- Every node dials a broker node (W3: its link tries each broker in turn),
  -- from wherever it is: TLS from anywhere, as the first node's (X1). Left out
  -- where a module already opens that port to anyone (the first node's
  -- mesh-broker module, the bundle's), so no port is opened twice.
  select bn.node, 'tcp', bn.amqps, null::int, null::text[], null::text, 'broker, TLS', 'broker',
         'broker node ' || bn.address || ': every node may dial its broker over TLS (inventory.broker_nodes)'
    from bn
   where bn.node in (select node from want) and not exists (select 1 from opening o where o.node = bn.node and o.proto = 'tcp' and o.port = bn.amqps and o.port_to is null and o."from" = 'any')),
bp as (select * from overlay.broker_ports()),
-- The members whose addresses the openings name: for a few nodes, those alone (the nodes
-- themselves, the nodes of the modules and sites their openings admit, a provision's
-- consumers, a route's proxies, the broker nodes, and one member for the interface's name);
-- for many, every member.
few as (select $1 is not null and cardinality($1) <= 1000 as yes),
needed as (
  select node from want
  union select pl.node from placed pl where pl.module in (select substr(o."from", 8) from opening o where o."from" like 'module:%')
  union select e.name from inventory.enrolled_node e where e.site in (select substr(o."from", 6) from opening o where o."from" like 'site:%')
  union select pl.node from placed pl where pl.module in (select b.facts->>'consumer' from binds b where b.facts->>'kind' = 'postgres' and b.path like '%/provides/%')
  union select p.node from provides p where p.path like '%/provides/%'
  union select bn.node from bn
  union (select m.name from overlay.member m limit 1)),
fm as materialized (select * from overlay.firewall_members_of(case when (select yes from few) then array(select node from needed) end, $2)),
wg as (
  select m.node, 'udp', m.listen_port, null::int, null::text[], null::text, 'WireGuard', 'overlay',
         case when $2 then 'WireGuard: this node is dialable; dialled by ' || coalesce(nullif(array_to_string(m.dialled_by, ', '), ''), 'no peer yet') end
    from fm m where m.listen_port is not null and m.node in (select node from want)),
pg as (
  -- A postgres provider's binds (one per consumer) say the port it serves;
  -- the consumer module's nodes may reach it over the overlay.
  select b.node, 'tcp', (b.facts->>'port')::int, null::int,
         coalesce((select array_agg(distinct c.address order by c.address) from placed pl join fm c on c.node = pl.node
                    where pl.module = b.facts->>'consumer'), '{}'),
         (select interface from fm limit 1),
         'provision ' || (b.facts->>'provision') || ': consumer ' || (b.facts->>'consumer'), 'provision',
         'provision ' || (b.facts->>'provision') || ' (postgres): consumer module ' || (b.facts->>'consumer') || ' on '
           || coalesce((select string_agg(pl.node, ', ' order by pl.node) from placed pl where pl.module = b.facts->>'consumer'), 'no node')
    from binds b
   where b.facts->>'kind' = 'postgres' and b.path like '%/provides/%'
     and (b.facts->>'port') ~ '^[0-9]{1,5}$' and (b.facts->>'port')::int between 1 and 65535),
route as (
  -- A route's consumer serves the port its grant names; the proxy's nodes
  -- (those holding the provider's binds for it) may reach it over the overlay.
  select c.node, 'tcp', (c.facts->>'port')::int, null::int,
         coalesce((select array_agg(distinct a.address order by a.address) from provides p join fm a on a.node = p.node
                    where p.path like '%/provides/%' and p.facts->>'provision' = c.facts->>'provision'
                      and p.facts->>'consumer' = c.facts->>'consumer'), '{}'),
         (select interface from fm limit 1),
         'route ' || (c.facts->>'provision') || ': proxy to ' || (c.facts->>'consumer'), 'provision',
         'route ' || (c.facts->>'provision') || ': the proxy reaches consumer module ' || (c.facts->>'consumer') || ' on its port'
    from binds c
   where c.facts->>'kind' = 'route' and c.path like '%/uses/%'
     and (c.facts->>'port') ~ '^[0-9]{1,5}$' and (c.facts->>'port')::int between 1 and 65535),
module as (
  select o.node, o.proto, o.port, o.port_to,
         case when o."from" = 'any' then null
              when o."from" like 'site:%' then coalesce((select array_agg(f.address order by f.address) from fm f where f.site = substr(o."from", 6)), '{}')
              else coalesce((select array_agg(distinct f.address order by f.address) from placed pl join fm f on f.node = pl.node
                              where pl.module = substr(o."from", 8)), '{}') end,
         case when o."from" = 'any' then null else (select interface from fm limit 1) end,
         coalesce(o.why, 'module ' || o.module || ': ' || o.name || ' from ' || o."from"), 'module',
         'module ' || o.module || ' serves ' || o.name || ' (' || o.proto || ' ' || o.port || coalesce('-' || o.port_to, '') || ') to ' || o."from"
    from opening o),
broker_erl as (
  -- epmd and the Erlang distribution: from the other broker nodes' overlay
  -- addresses, over the overlay, and from nothing else (the cookie is all
  -- that guards a node's distribution: it must never face the internet).
  select n.node, 'tcp', x.port, null::int,
         coalesce((select array_agg(distinct f.address order by f.address) from bn o join fm f on f.node = o.node where o.node <> n.node), '{}'),
         (select interface from fm limit 1),
         'broker cluster: ' || x.what, 'broker',
         'broker cluster: ' || x.what || ' from the other broker nodes ('
           || coalesce((select string_agg(distinct o.node, ', ' order by o.node) from bn o where o.node <> n.node), 'none yet') || ') over the overlay'
    from (select distinct node from bn where node in (select node from want)) n
   cross join lateral (select 'epmd' as what, bp.epmd_port as port from bp
                       union all select 'Erlang distribution', bp.dist_port from bp) x)
select node, proto, port, port_to, sources, via, left(why, 128) as why, origin, reason
  from (select * from ssh union all select * from wg union all select * from pg union all select * from route union all select * from module
        union all select * from broker_tls union all select * from broker_erl) x
 where port is not null
  $q$ using node_names, with_reasons;
end $_$;

ALTER FUNCTION assignment.firewall_openings_of(node_names text[], with_reasons boolean) OWNER TO mesh_assignment;

--
-- Name: FUNCTION firewall_openings_of(node_names text[], with_reasons boolean); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.firewall_openings_of(node_names text[], with_reasons boolean) IS 'assignment.firewall_openings for the nodes named (null: every node).';

--
-- Name: firewalls(text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.firewalls(node_names text[]) RETURNS TABLE(node text, resource jsonb)
    LANGUAGE sql STABLE
    SET jit TO 'off'
    AS $$
  with want as materialized (
    select e.name as node from inventory.enrolled_node e where node_names is null
    union all select e.name from inventory.enrolled_node e where e.name in (select unnest(node_names))),
  o as (
    select o.node, jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
             'proto', o.proto, 'port', o.port,
             'to', case when o.port_to is distinct from o.port then o.port_to end,
             'from', to_jsonb(o.sources), 'via', o.via, 'why', o.why))
           order by o.proto, o.port, o.why, o.sources::text) as rules
      from assignment.firewall_openings_of(node_names, false) o join want w on w.node = o.node
     where o.sources is null or cardinality(o.sources) > 0
     group by o.node),
  fm as (select m.node, m.interface from overlay.firewall_members_of(node_names, false) m join want w on w.node = m.node)
  select w.node, jsonb_strip_nulls(jsonb_build_object('id', 'firewall:mesh', 'kind', 'firewall', 'name', 'mesh',
                                                      'rules', coalesce(o.rules, '[]'::jsonb), 'forward', fm.interface))
    from want w left join o on o.node = w.node left join fm on fm.node = w.node
$$;

ALTER FUNCTION assignment.firewalls(node_names text[]) OWNER TO mesh_assignment;

--
-- Name: fleet_metrics(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.fleet_metrics() RETURNS TABLE(metric text, labels jsonb, value double precision)
    LANGUAGE sql STABLE
    AS $$
  with owed as (
    select count(*)::float8 as n,
           coalesce(extract(epoch from now() - min(p.owed_since)), 0)::float8 as oldest,
           coalesce(sum(p.attempts), 0)::float8 as attempts
      from assignment.pending_delivery p),
  open as (
    select r.wave, r.applied, r.failing, r.waiting from assignment.rollout_status r
     where r.state in ('holding', 'rolling', 'paused', 'halted')),
  fresh as (
    select count(*) filter (where f.expired)::float8 as expired,
           coalesce(extract(epoch from now() - min(f.signed_at)), 0)::float8 as oldest
      from assignment.declaration_freshness f)
  select 'mesh_outbox_owed_rows', '{}'::jsonb, owed.n from owed
  union all
  select 'mesh_outbox_oldest_owed_seconds', '{}', owed.oldest from owed
  union all
  select 'mesh_outbox_owed_attempts', '{}', owed.attempts from owed
  union all
  select 'mesh_rollouts', jsonb_build_object('state', k.state),
         (select count(*) from assignment.rollout r where r.state = k.state)::float8
    from (values ('holding'), ('rolling'), ('paused'), ('halted'), ('done'), ('aborted'), ('released')) k(state)
  union all
  select 'mesh_rollout_wave', '{}', coalesce((select open.wave from open), 0)::float8
  union all
  select 'mesh_rollout_nodes', jsonb_build_object('state', k.state),
         coalesce((select case k.state when 'applied' then open.applied when 'failing' then open.failing
                                       else open.waiting end from open), 0)::float8
    from (values ('applied'), ('failing'), ('waiting')) k(state)
  union all
  select 'mesh_declarations_expired', '{}', fresh.expired from fresh
  union all
  select 'mesh_declaration_oldest_age_seconds', '{}', fresh.oldest from fresh
$$;

ALTER FUNCTION assignment.fleet_metrics() OWNER TO mesh_assignment;

--
-- Name: FUNCTION fleet_metrics(); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.fleet_metrics() IS 'The outbox (owed rows, oldest age, attempts), rollouts by state and the open one''s wave and nodes, and the declarations'' age and expiry, counted for /metrics. No per-node rows.';

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: freeze; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment."freeze" (
    id bigint NOT NULL,
    from_at timestamp with time zone NOT NULL,
    until_at timestamp with time zone NOT NULL,
    site text,
    module text,
    made_at timestamp with time zone DEFAULT now() NOT NULL,
    overridden_at timestamp with time zone,
    override_reason text,
    ended_at timestamp with time zone,
    CONSTRAINT freeze_check CHECK ((until_at > from_at)),
    CONSTRAINT freeze_check1 CHECK (((overridden_at IS NULL) = (override_reason IS NULL)))
);

ALTER TABLE assignment."freeze" OWNER TO mesh_assignment;

--
-- Name: TABLE "freeze"; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment."freeze" IS 'Change-freeze windows: inside one, changes to the nodes it covers are held as a rollout holds them.';

--
-- Name: COLUMN "freeze".from_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment."freeze".from_at IS 'When the window opens.';

--
-- Name: COLUMN "freeze".until_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment."freeze".until_at IS 'When it closes: what it held goes out then.';

--
-- Name: COLUMN "freeze".site; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment."freeze".site IS 'Only the nodes of this site; null: every site.';

--
-- Name: COLUMN "freeze".module; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment."freeze".module IS 'Only the nodes assigned this module; null: every node.';

--
-- Name: COLUMN "freeze".overridden_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment."freeze".overridden_at IS 'When an operator ended it early (mesh freeze override).';

--
-- Name: COLUMN "freeze".override_reason; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment."freeze".override_reason IS 'Why it was ended early, as the operator said it.';

--
-- Name: COLUMN "freeze".ended_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment."freeze".ended_at IS 'When mesh serve (or the override) released what it held; null while it may still hold.';

--
-- Name: freezes_now(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.freezes_now() RETURNS SETOF assignment."freeze"
    LANGUAGE sql STABLE
    AS $$
  select * from assignment.freeze f
   where f.from_at <= now() and now() < f.until_at and f.overridden_at is null
$$;

ALTER FUNCTION assignment.freezes_now() OWNER TO mesh_assignment;

--
-- Name: frozen_nodes(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.frozen_nodes() RETURNS TABLE(node text, "freeze" bigint, until_at timestamp with time zone)
    LANGUAGE sql STABLE
    AS $$
  select distinct on (s.node) s.node, f.id, f.until_at
    from assignment.freezes_now() f
    join inventory.enrolled_node e on f.site is null or e.site = f.site
    join assignment.node_serial s on s.node = e.name
   where f.module is null or exists (select 1 from assignment.assignment a where a.node = e.name and a.module = f.module)
   order by s.node, f.until_at desc, f.id
$$;

ALTER FUNCTION assignment.frozen_nodes() OWNER TO mesh_assignment;

--
-- Name: FUNCTION frozen_nodes(); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.frozen_nodes() IS 'Each declared node a change-freeze window holds now, the window, and until when.';

--
-- Name: held_nodes(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.held_nodes() RETURNS TABLE(node text)
    LANGUAGE sql STABLE
    AS $$
  select s.node
    from assignment.node_serial s
    join assignment.rollout r on r.state in ('holding', 'rolling', 'paused', 'halted')
   where not exists (select 1 from assignment.rollout_node n
                      where n.rollout = r.id and n.node = s.node and n.released_at is not null)
  union
  select f.node from assignment.frozen_nodes() f
$$;

ALTER FUNCTION assignment.held_nodes() OWNER TO mesh_assignment;

--
-- Name: hold_changes(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.hold_changes() RETURNS bigint
    LANGUAGE plpgsql
    AS $$
declare r assignment.rollout := assignment.open_rollout(); made bigint;
begin
  if r.id is not null then
    raise exception 'rollout % is already open (%)', r.id, r.state
      using errcode = 'MSH23', hint = 'one rollout at a time: see mesh rollout status; end it with mesh rollout release or abort';
  end if;
  insert into assignment.rollout default values returning id into made;
  return made;
end $$;

ALTER FUNCTION assignment.hold_changes() OWNER TO mesh_assignment;

--
-- Name: hold_declare_turn(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.hold_declare_turn() RETURNS void
    LANGUAGE sql
    AS $$
  select pg_advisory_lock(assignment.declare_turn_key())
$$;

ALTER FUNCTION assignment.hold_declare_turn() OWNER TO mesh_assignment;

--
-- Name: FUNCTION hold_declare_turn(); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.hold_declare_turn() IS 'Take the declare turn for this session, until release_declare_turn or the connection ends: a declare committed in parts holds it across them.';

--
-- Name: latest_envelope(text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.latest_envelope(node_name text) RETURNS bytea
    LANGUAGE sql STABLE
    AS $$
  select envelope from assignment.declaration where node = node_name order by serial desc limit 1
$$;

ALTER FUNCTION assignment.latest_envelope(node_name text) OWNER TO mesh_assignment;

--
-- Name: lose_openings(text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.lose_openings(down text[]) RETURNS TABLE(node text, proto text, port integer, port_to integer, why text, origin text, from_node text, lost_hub text, carried_by text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
declare
  lose text[];     -- the nodes that lose a path: the spokes stranded, and the nodes down
  lose_at text[];  -- their overlay addresses, as an opening's sources name them
begin
  down := coalesce(down, '{}');
  select coalesce(array_agg(r.node), '{}') || down into lose from overlay.route_members(down) r where r.route_now = any(down);
  select array_agg(f.address) into lose_at from overlay.firewall_members(false) f where f.node = any(lose);
  -- As values, not a join: the planner takes them into each part of the
  -- firewall, so only the openings of those nodes, and those admitting one
  -- of them, are ever composed.
  return query
    with r as materialized (select r.*, coalesce(r.route_now = any(down), false) as stranded from overlay.route_members(down) r),
         fm as materialized (select f.node, f.address from overlay.firewall_members(false) f),
         o as materialized (select o.node, o.proto, o.port, o.port_to, o.why, o.origin, o.sources
                              from assignment.firewall_openings(false) o
                             where o.sources is not null and (o.node = any(lose) or o.sources && lose_at)),
         src as materialized (
           select o.node, o.proto, o.port, o.port_to, o.why, o.origin, f.node as from_node
             from o cross join lateral unnest(o.sources) x(source) join fm f on f.address = x.source
            where f.node <> o.node and (o.node = any(lose) or f.node = any(lose))),
         -- Each source with its end of the graph, before the node's: joined to
         -- both at once, the planner may pair every member with every other first.
         sa as materialized (
           select s.*, a.hub, a.route_now, a.route_after, a.site, a.dialable, a.stranded
             from src s join r a on a.node = s.from_node)
    select s.node, s.proto, s.port, s.port_to, s.why, s.origin, s.from_node, null::text, null::text
      from src s
     where s.node = any(down) and not (s.from_node = any(down))
    union all
    select a.node, a.proto, a.port, a.port_to, a.why, a.origin, a.from_node,
           case when a.stranded then a.route_now else b.route_now end,
           case when a.stranded then a.route_after else b.route_after end
      from sa a
      join r b on b.node = a.node
     where (a.stranded or b.stranded)
       and not overlay.peered(a.from_node, a.hub, a.route_now, a.site, a.dialable, b.node, b.hub, b.route_now, b.site, b.dialable);
end $$;

ALTER FUNCTION assignment.lose_openings(down text[]) OWNER TO mesh_assignment;

--
-- Name: FUNCTION lose_openings(down text[]); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.lose_openings(down text[]) IS 'Each opening over the overlay (provision, module, broker) and each source member that loses every path to it when DOWN fails: the hub lost (null: its node is down) and the hub that would carry it once the graph is computed again (null: none) (Q2).';

--
-- Name: mark_delivered(bigint[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.mark_delivered(ids bigint[]) RETURNS void
    LANGUAGE sql
    AS $$
  update assignment.outbox set delivered_at = coalesce(delivered_at, now()), last_error = null where id = any(ids)
$$;

ALTER FUNCTION assignment.mark_delivered(ids bigint[]) OWNER TO mesh_assignment;

--
-- Name: FUNCTION mark_delivered(ids bigint[]); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.mark_delivered(ids bigint[]) IS 'The broker confirmed these rows: delivered now, or when first delivered if they already were (W1). Found by primary key alone.';

--
-- Name: mark_failed(bigint[], text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.mark_failed(ids bigint[], errors text[]) RETURNS void
    LANGUAGE sql
    AS $$
  update assignment.outbox o set attempts = o.attempts + 1, last_error = f.err,
         next_attempt_at = now() + least(60, power(2, o.attempts)) * interval '1 second'
    from unnest(ids, errors) as f(id, err)
   where o.id = f.id and o.delivered_at is null
$$;

ALTER FUNCTION assignment.mark_failed(ids bigint[], errors text[]) OWNER TO mesh_assignment;

--
-- Name: move_rollout(text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.move_rollout(verb text) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
declare r assignment.rollout := assignment.open_rollout();
begin
  if verb = 'pause' and r.state = 'rolling' then
    update assignment.rollout set state = 'paused' where id = r.id;
  elsif verb = 'resume' and r.state in ('paused', 'halted') then
    update assignment.rollout set state = 'rolling', wave_started = now(), resumed_at = now(), reason = null where id = r.id;
    perform pg_notify('mesh_rollout', r.id::text);
  else
    perform assignment.refuse_move(r, verb);
  end if;
  return r.id;
end $$;

ALTER FUNCTION assignment.move_rollout(verb text) OWNER TO mesh_assignment;

--
-- Name: note_change(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.note_change() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare r jsonb := to_jsonb(coalesce(new, old)); what text;
begin
  if coalesce(current_setting('mesh.promise_change', true), '') <> '' then return case when tg_op = 'DELETE' then old else new end; end if;
  if not exists (select 1 from assignment.promise) then return case when tg_op = 'DELETE' then old else new end; end if;
  what := case tg_table_schema || '.' || tg_table_name
            when 'catalogue.module' then case tg_op when 'DELETE' then 'module ' || (r->>'name') || ' removed'
                                                    else 'module add ' || (r->>'name') end
            when 'assignment.assignment' then case tg_op when 'DELETE' then format('unassign %s %s', r->>'module', r->>'node')
                                                         else format('assign %s %s', r->>'module', r->>'node') end
            when 'overlay.hub' then case tg_op when 'DELETE' then format('overlay hub %s --off', r->>'node')
                                               else format('overlay hub %s', r->>'node') end
            when 'provision.grant' then case tg_op when 'DELETE' then format('provision revoke %s %s', r->>'provision', r->>'consumer')
                                                   else format('provision grant %s %s', r->>'provision', r->>'consumer') end
            else tg_table_name || ' changed' end;
  perform set_config('mesh.promise_change', what, true);
  perform set_config('mesh.promises_broken_before',
                     coalesce((select string_agg(b.name, ',') from assignment.broken_promises() b), ''), true);
  if tg_op = 'DELETE' then return old; end if;
  return new;
end $$;

ALTER FUNCTION assignment.note_change() OWNER TO mesh_assignment;

--
-- Name: note_unchanged(bigint, text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.note_unchanged(rollout_id bigint, node_names text[]) RETURNS void
    LANGUAGE sql
    AS $$
  update assignment.rollout_node n set nothing_owed = true
   where n.rollout = rollout_id and n.node = any(node_names) and n.released_at is not null
     and (select s.serial from assignment.node_serial s where s.node = n.node) = n.from_serial
$$;

ALTER FUNCTION assignment.note_unchanged(rollout_id bigint, node_names text[]) OWNER TO mesh_assignment;

--
-- Name: rollout; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.rollout (
    id bigint NOT NULL,
    state text DEFAULT 'holding'::text NOT NULL,
    waves text[],
    wait_healthy interval DEFAULT '00:02:00'::interval NOT NULL,
    max_failing integer DEFAULT 0 NOT NULL,
    first text[] DEFAULT '{}'::text[] NOT NULL,
    wave integer DEFAULT 0 NOT NULL,
    wave_started timestamp with time zone,
    resumed_at timestamp with time zone,
    reason text,
    held_at timestamp with time zone DEFAULT now() NOT NULL,
    started_at timestamp with time zone,
    ended_at timestamp with time zone,
    CONSTRAINT rollout_check CHECK (((state = ANY (ARRAY['done'::text, 'aborted'::text, 'released'::text])) = (ended_at IS NOT NULL))),
    CONSTRAINT rollout_max_failing_check CHECK ((max_failing >= 0)),
    CONSTRAINT rollout_state_check CHECK ((state = ANY (ARRAY['holding'::text, 'rolling'::text, 'paused'::text, 'halted'::text, 'done'::text, 'aborted'::text, 'released'::text]))),
    CONSTRAINT rollout_wait_healthy_check CHECK ((wait_healthy > '00:00:00'::interval)),
    CONSTRAINT rollout_wave_check CHECK ((wave >= 0))
);

ALTER TABLE assignment.rollout OWNER TO mesh_assignment;

--
-- Name: TABLE rollout; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.rollout IS 'Each rollout: a hold on changed compositions, then their release wave by wave. At most one is open (holding, rolling, paused, halted).';

--
-- Name: COLUMN rollout.state; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout.state IS 'holding: changes wait; rolling: waves go out; paused or halted: no new wave; done, aborted, released: ended.';

--
-- Name: COLUMN rollout.waves; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout.waves IS 'The waves as given (1, 10%, 100%): each the number or share of the rollout''s nodes reached by its end.';

--
-- Name: COLUMN rollout.wait_healthy; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout.wait_healthy IS 'How long a wave may take to report applied before the rollout halts.';

--
-- Name: COLUMN rollout.max_failing; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout.max_failing IS 'How many released nodes may fail before the rollout halts.';

--
-- Name: COLUMN rollout.first; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout.first IS 'Canaries pinned by the operator, in order.';

--
-- Name: COLUMN rollout.wave; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout.wave IS 'The wave out now (1-based); 0 before the start.';

--
-- Name: COLUMN rollout.wave_started; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout.wave_started IS 'When the wave out now was released (or resumed): the wait counts from here.';

--
-- Name: COLUMN rollout.resumed_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout.resumed_at IS 'When it was last resumed: a failure reported before then is old news (the machine may be fixed) until the node says so again.';

--
-- Name: COLUMN rollout.reason; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout.reason IS 'Why it halted or was aborted, naming the nodes.';

--
-- Name: open_rollout(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.open_rollout() RETURNS assignment.rollout
    LANGUAGE sql STABLE
    AS $$
  select r from assignment.rollout r where r.state in ('holding', 'rolling', 'paused', 'halted')
$$;

ALTER FUNCTION assignment.open_rollout() OWNER TO mesh_assignment;

--
-- Name: override_freeze(bigint, text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.override_freeze(freeze_id bigint, why text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  if coalesce(btrim(why), '') = '' then
    raise exception 'an override of freeze % without a reason', freeze_id using errcode = 'MSHB4',
      hint = 'say why, for the history: mesh freeze override ID --reason "security fix for CVE-..."';
  end if;
  update assignment.freeze set overridden_at = now(), override_reason = why
   where id = freeze_id and overridden_at is null and until_at > now();
  if not found then
    raise exception 'no freeze % holds now or later', freeze_id using errcode = 'MSHB5', hint = 'mesh freeze list shows the windows';
  end if;
end $$;

ALTER FUNCTION assignment.override_freeze(freeze_id bigint, why text) OWNER TO mesh_assignment;

--
-- Name: owed_now(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.owed_now() RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select exists (select 1 from assignment.outbox where delivered_at is null and next_attempt_at <= now())
$$;

ALTER FUNCTION assignment.owed_now() OWNER TO mesh_assignment;

--
-- Name: peek_serial(text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.peek_serial(node_name text) RETURNS bigint
    LANGUAGE sql STABLE
    AS $$
  select coalesce((select serial from assignment.node_serial where node = node_name), 0) + 1
$$;

ALTER FUNCTION assignment.peek_serial(node_name text) OWNER TO mesh_assignment;

--
-- Name: pin_advisory(text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.pin_advisory(advisory_id text) RETURNS TABLE(node text, name text, version text)
    LANGUAGE plpgsql
    AS $$
#variable_conflict use_column
begin
  if not exists (select 1 from inventory.advisory a where a.id = advisory_id) then
    raise exception 'no advisory % is loaded', coalesce(advisory_id, 'null')
      using errcode = 'MSHO4', hint = 'load it first: mesh advisories load FILE';
  end if;
  return query
  with fix as (
    select distinct on (a.node, a.name) a.node, a.name, a.fixed
      from inventory.advisory_node a
     where a.advisory = advisory_id and a.fixed is not null
     order by a.node, a.name, inventory.debian_version_key(a.fixed) desc),
  pinned as (
    insert into assignment.package_pin as p (node, name, version, advisory)
    select f.node, f.name, f.fixed, advisory_id from fix f
    on conflict (node, name) do update set version = excluded.version, advisory = excluded.advisory, pinned_at = now()
      where inventory.compare_debian_version(excluded.version, p.version) > 0
    returning p.node, p.name, p.version)
  select f.node, f.name, f.fixed from fix f order by f.node, f.name;
  if not found then
    raise exception 'advisory % lists no node running an affected version with a fix to declare', advisory_id
      using errcode = 'MSHO5', hint = 'mesh advisories lists the nodes each advisory affects; an advisory naming no fixed version has nothing to roll out';
  end if;
end $$;

ALTER FUNCTION assignment.pin_advisory(advisory_id text) OWNER TO mesh_assignment;

--
-- Name: plan_changes(text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.plan_changes(node_names text[] DEFAULT NULL::text[]) RETURNS TABLE(node text, id text, change text)
    LANGUAGE sql STABLE
    SET jit TO 'off'
    AS $$
  with nxt as materialized (select c.node, c.resources::jsonb as resources from assignment.compose_each(node_names) c),
  applied as materialized (
    -- The newest declaration each node acknowledged since it enrolled: what it runs now. The envelope
    -- read as json (checked, not built), only its body as jsonb: a third of the parse at 100,000 nodes.
    select distinct on (d.node) d.node, ((convert_from(d.envelope, 'utf8')::json->>'body')::jsonb)->'resources' as resources
      from assignment.declaration d
      join inventory.enrolled_node e on e.name = d.node and d.issued_at >= e.enrolled_at
     where d.acknowledged_at is not null and d.node in (select n.node from nxt n)
     order by d.node, d.serial desc),
  nr as (select n.node, e.value as r from nxt n cross join lateral jsonb_array_elements(n.resources) e),
  lr as (select a.node, e.value as r from applied a cross join lateral jsonb_array_elements(a.resources) e),
  diff as materialized (
    select coalesce(nr.node, lr.node) as node, coalesce(nr.r->>'id', lr.r->>'id') as id,
           case when lr.r is null then 'added' when nr.r is null then 'removed' else 'changed' end as change,
           coalesce(nr.r, lr.r)->>'path' as path
      from nr full join lr on lr.node = nr.node and lr.r->>'id' = nr.r->>'id'
     where nr.r is distinct from lr.r),
  -- What a restartOn may name: a changed resource's id, or a changed file's path.
  touched as (
    select d.node, array_agg(d.id) || coalesce(array_agg(d.path) filter (where d.path is not null), '{}') as keys
      from diff d group by d.node),
  restarts as (
    select nr.node, nr.r->>'id' as id, 'restarts' as change
      from nr join touched t on t.node = nr.node
     where jsonb_typeof(nr.r->'restartOn') = 'array' and (nr.r->'restartOn') ?| t.keys
       -- Added or changed itself: it starts or restarts as that, not because of another.
       and not exists (select 1 from diff d where d.node = nr.node and d.id = nr.r->>'id'))
  select d.node, d.id, d.change from diff d
  union all select r.node, r.id, r.change from restarts r
  order by 1, 2, 3
$$;

ALTER FUNCTION assignment.plan_changes(node_names text[]) OWNER TO mesh_assignment;

--
-- Name: FUNCTION plan_changes(node_names text[]); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.plan_changes(node_names text[]) IS 'Every change the next declaration brings each node against the one it last acknowledged since it enrolled: added, changed, removed, and the services that restart because of them. Null for every enrolled node.';

--
-- Name: plan_summary(text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.plan_summary(node_names text[] DEFAULT NULL::text[]) RETURNS TABLE(nodes bigint, changes text[], sample text[])
    LANGUAGE sql STABLE
    AS $$
  with per as (
    select p.node, array_agg(p.id || ' ' || p.change order by p.id, p.change) as changes
      from assignment.plan_changes(node_names) p group by p.node)
  select count(*), per.changes, (array_agg(per.node order by per.node))[1:5]
    from per group by per.changes
   order by count(*) desc, per.changes
$$;

ALTER FUNCTION assignment.plan_summary(node_names text[]) OWNER TO mesh_assignment;

--
-- Name: FUNCTION plan_summary(node_names text[]); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.plan_summary(node_names text[]) IS 'plan_changes grouped by the exact list of changes: how many nodes, which changes, up to five of the nodes.';

--
-- Name: promise; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.promise (
    name text NOT NULL,
    kind text NOT NULL,
    site text,
    node text,
    peer text,
    module text,
    service text,
    port integer,
    at_least integer,
    made_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT promise_at_least_check CHECK ((at_least >= 1)),
    CONSTRAINT promise_check CHECK (
CASE kind
    WHEN 'closed'::text THEN ((site IS NOT NULL) AND (port IS NOT NULL))
    WHEN 'reaches'::text THEN ((node IS NOT NULL) AND (peer IS NOT NULL) AND (port IS NOT NULL))
    WHEN 'runs'::text THEN ((module IS NOT NULL) AND (service IS NOT NULL))
    WHEN 'hubs'::text THEN (at_least IS NOT NULL)
    ELSE NULL::boolean
END),
    CONSTRAINT promise_kind_check CHECK ((kind = ANY (ARRAY['closed'::text, 'reaches'::text, 'runs'::text, 'hubs'::text]))),
    CONSTRAINT promise_name_check CHECK ((name ~ '^[a-z][a-z0-9-]{0,62}$'::text)),
    CONSTRAINT promise_port_check CHECK (((port >= 1) AND (port <= 65535)))
);

ALTER TABLE assignment.promise OWNER TO mesh_assignment;

--
-- Name: TABLE promise; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.promise IS 'What the operator promised of the fleet (Q1): checked in the transaction of every change to modules, assignments, hubs and grants.';

--
-- Name: COLUMN promise.name; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.promise.name IS 'Its name: a refusal and mesh promise remove name it.';

--
-- Name: COLUMN promise.kind; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.promise.kind IS 'closed: no node of site opens port; reaches: node reaches peer:port; runs: every node assigned module runs service; hubs: at least at_least hubs.';

--
-- Name: COLUMN promise.site; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.promise.site IS 'closed: the site none of whose nodes may open the port.';

--
-- Name: COLUMN promise.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.promise.node IS 'reaches: the node that must reach the peer.';

--
-- Name: COLUMN promise.peer; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.promise.peer IS 'reaches: the node that must be reached.';

--
-- Name: COLUMN promise.module; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.promise.module IS 'runs: the module whose every node runs the service.';

--
-- Name: COLUMN promise.service; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.promise.service IS 'runs: the service (a service resource''s name) those nodes run.';

--
-- Name: COLUMN promise.port; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.promise.port IS 'closed: the port nobody of the site opens; reaches: the port the peer must admit the node on.';

--
-- Name: COLUMN promise.at_least; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.promise.at_least IS 'hubs: how many hubs there must be at least.';

--
-- Name: COLUMN promise.made_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.promise.made_at IS 'When it was promised.';

--
-- Name: promise_text(assignment.promise); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.promise_text(p assignment.promise) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
  select case p.kind
           when 'closed' then format('no node of site %s opens port %s', p.site, p.port)
           when 'reaches' then format('%s reaches %s:%s', p.node, p.peer, p.port)
           when 'runs' then format('every node assigned module %s runs service %s', p.module, p.service)
           when 'hubs' then format('at least %s hubs', p.at_least) end
$$;

ALTER FUNCTION assignment.promise_text(p assignment.promise) OWNER TO mesh_assignment;

--
-- Name: record_declarations(text[], bigint[], text[], text[], text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.record_declarations(nodes text[], serials bigint[], digests text[], hashes text[], envelope_lines text) RETURNS integer
    LANGUAGE plpgsql
    AS $$
declare
  n integer;
  envelopes text[] := string_to_array(envelope_lines, E'\n');
begin
  insert into assignment.declaration (node, serial, digest, resources_hash, envelope)
  select u.n, u.s, decode(u.d, 'hex'), decode(u.h, 'hex'), convert_to(u.e, 'utf8')
    from unnest(nodes, serials, digests, hashes, envelopes) as u(n, s, d, h, e);
  get diagnostics n = row_count;
  insert into assignment.outbox (node, kind, serial)
  select u.n, 'declaration', u.s
    from unnest(nodes, serials) as u(n, s);
  perform pg_notify('mesh_outbox', '');
  return n;
end $$;

ALTER FUNCTION assignment.record_declarations(nodes text[], serials bigint[], digests text[], hashes text[], envelope_lines text) OWNER TO mesh_assignment;

--
-- Name: FUNCTION record_declarations(nodes text[], serials bigint[], digests text[], hashes text[], envelope_lines text); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.record_declarations(nodes text[], serials bigint[], digests text[], hashes text[], envelope_lines text) IS 'Record a batch of declarations (digests and hashes in hex, envelopes one JSON text a line) and owe each to its node in the outbox (W1).';

--
-- Name: recorded_resources(text[], bigint[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.recorded_resources(node_names text[], serials bigint[]) RETURNS TABLE(node text, resources text, resources_hash bytea)
    LANGUAGE sql STABLE
    AS $$
  select d.node, ((convert_from(d.envelope, 'utf8')::jsonb ->> 'body')::jsonb -> 'resources')::text, d.resources_hash
    from unnest(node_names, serials) w(node, serial)
    join assignment.declaration d on d.node = w.node and d.serial = w.serial
$$;

ALTER FUNCTION assignment.recorded_resources(node_names text[], serials bigint[]) OWNER TO mesh_assignment;

--
-- Name: refuse_held(text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.refuse_held(node_names text[]) RETURNS void
    LANGUAGE plpgsql
    AS $$
declare r assignment.rollout := assignment.open_rollout(); f record;
begin
  if coalesce(cardinality(node_names), 0) = 0 then return; end if;
  select string_agg(z.node, ', ' order by z.node) as nodes, min(z.freeze) as freeze, max(z.until_at) as until_at into f
    from assignment.frozen_nodes() z where z.node = any(node_names);
  if f.nodes is not null then
    raise exception 'the change to % is held by freeze % until %', f.nodes, f.freeze, f.until_at
      using errcode = 'MSHQ8', hint = 'it goes out when the window ends; to send it now: mesh freeze override ID --reason TEXT';
  end if;
  raise exception 'the change to % is held by rollout %, which is %', array_to_string(node_names, ', '), r.id, r.state
    using errcode = 'MSH28', hint = 'release it with mesh rollout start (in waves) or mesh rollout release (at once); see mesh plan --all';
end $$;

ALTER FUNCTION assignment.refuse_held(node_names text[]) OWNER TO mesh_assignment;

--
-- Name: refuse_move(assignment.rollout, text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.refuse_move(r assignment.rollout, verb text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  if r.id is null then
    raise exception 'no change is held' using errcode = 'MSH24',
      hint = 'start with mesh rollout hold, make the changes, then mesh rollout start; mesh rollout status shows the last rollout';
  end if;
  raise exception 'rollout % is %: it cannot %', r.id, r.state, verb using errcode = 'MSH29',
    hint = case verb when 'start' then 'it started already: see mesh rollout status; pause, resume or abort it'
                     when 'pause' then 'only a rolling rollout pauses: see mesh rollout status'
                     when 'resume' then 'only a paused or halted rollout resumes: see mesh rollout status'
                     else 'nothing went out yet: mesh rollout release lifts the hold, or leave it held' end;
end $$;

ALTER FUNCTION assignment.refuse_move(r assignment.rollout, verb text) OWNER TO mesh_assignment;

--
-- Name: refuse_setting(text, text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.refuse_setting(detail text, remedy text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  raise exception 'the rollout cannot use %', detail using errcode = 'MSH25', hint = remedy;
end $$;

ALTER FUNCTION assignment.refuse_setting(detail text, remedy text) OWNER TO mesh_assignment;

--
-- Name: release_declare_turn(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.release_declare_turn() RETURNS void
    LANGUAGE sql
    AS $$
  select pg_advisory_unlock(assignment.declare_turn_key())
$$;

ALTER FUNCTION assignment.release_declare_turn() OWNER TO mesh_assignment;

--
-- Name: FUNCTION release_declare_turn(); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.release_declare_turn() IS 'Give back the declare turn this session holds.';

--
-- Name: release_hold(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.release_hold() RETURNS bigint
    LANGUAGE plpgsql
    AS $$
declare r assignment.rollout := assignment.open_rollout();
begin
  if r.id is null then perform assignment.refuse_move(r, 'release'); end if;
  update assignment.rollout set state = 'released', ended_at = now() where id = r.id;
  return r.id;
end $$;

ALTER FUNCTION assignment.release_hold() OWNER TO mesh_assignment;

--
-- Name: remove_freeze(bigint); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.remove_freeze(freeze_id bigint) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  delete from assignment.freeze where id = freeze_id;
  if not found then
    raise exception 'no freeze %', freeze_id using errcode = 'MSHB6', hint = 'mesh freeze list shows the windows';
  end if;
end $$;

ALTER FUNCTION assignment.remove_freeze(freeze_id bigint) OWNER TO mesh_assignment;

--
-- Name: remove_promise(text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.remove_promise(promise_name text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  delete from assignment.promise where name = promise_name;
  if not found then
    raise exception 'no promise named %', promise_name using errcode = 'MSHQ5', hint = 'mesh promise list shows the promises';
  end if;
end $$;

ALTER FUNCTION assignment.remove_promise(promise_name text) OWNER TO mesh_assignment;

--
-- Name: resource_changes(jsonb, jsonb); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.resource_changes(before jsonb, after jsonb) RETURNS TABLE(id text, change text)
    LANGUAGE sql IMMUTABLE
    AS $$
  with b as (select e.value as r from jsonb_array_elements(coalesce(before, '[]')) e),
  a as (select e.value as r from jsonb_array_elements(coalesce(after, '[]')) e),
  diff as (
    select coalesce(a.r->>'id', b.r->>'id') as id,
           case when b.r is null then 'added' when a.r is null then 'removed' else 'changed' end as change,
           coalesce(a.r, b.r)->>'path' as path
      from a full join b on b.r->>'id' = a.r->>'id'
     where a.r is distinct from b.r),
  keys as (select array_agg(d.id) || coalesce(array_agg(d.path) filter (where d.path is not null), '{}') as k from diff d)
  select d.id, d.change from diff d
  union all
  select a.r->>'id', 'restarts' from a cross join keys
   where keys.k is not null and jsonb_typeof(a.r->'restartOn') = 'array' and (a.r->'restartOn') ?| keys.k
     and not exists (select 1 from diff d where d.id = a.r->>'id')
  order by 1, 2
$$;

ALTER FUNCTION assignment.resource_changes(before jsonb, after jsonb) OWNER TO mesh_assignment;

--
-- Name: resources_of(bytea); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.resources_of(envelope bytea) RETURNS jsonb
    LANGUAGE sql IMMUTABLE
    AS $$
  select ((convert_from(envelope, 'utf8')::jsonb->>'body')::jsonb)->'resources'
$$;

ALTER FUNCTION assignment.resources_of(envelope bytea) OWNER TO mesh_assignment;

--
-- Name: restored(bigint, text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.restored(rollout_id bigint, node_names text[]) RETURNS void
    LANGUAGE sql
    AS $$
  update assignment.rollout_node set restore_owed = false where rollout = rollout_id and node = any(node_names)
$$;

ALTER FUNCTION assignment.restored(rollout_id bigint, node_names text[]) OWNER TO mesh_assignment;

--
-- Name: restores_owed(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.restores_owed() RETURNS TABLE(rollout bigint, node text, from_serial bigint)
    LANGUAGE sql STABLE
    AS $$
  select n.rollout, n.node, n.from_serial from assignment.rollout_node n
   where n.restore_owed and exists (select 1 from inventory.enrolled_node e where e.name = n.node)
   order by n.rollout, n.position
$$;

ALTER FUNCTION assignment.restores_owed() OWNER TO mesh_assignment;

--
-- Name: rollout_node_state(bigint); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.rollout_node_state(rollout_id bigint) RETURNS TABLE(node text, wave integer, "position" integer, from_serial bigint, newest_serial bigint, released_at timestamp with time zone, state text, why text)
    LANGUAGE sql STABLE
    AS $$
  select n.node, n.wave, n.position, n.from_serial, s.serial, n.released_at,
         case when n.released_at is null then 'held'
              when n.restore_owed then 'restoring'
              when f.fresh or x.fresh then 'failing'
              when n.nothing_owed or (s.serial > n.from_serial and d.acknowledged_at is not null
                                      and (t.version is null or v.agent_version is not distinct from t.version)) then 'applied'
              else 'waiting' end,
         case when n.released_at is null then 'not yet released'
              when n.restore_owed then format('owed declaration %s again (the rollout was aborted)', n.from_serial)
              when f.node is not null and (f.fresh or not coalesce(x.fresh, false)) then format('declaration %s could not apply %s%s', f.serial,
                     (select string_agg(e->>'id' || ': ' || (e->>'error'), '; ') from jsonb_array_elements(f.failed) e),
                     case when f.fresh then '' else ' (before the resume: waiting for a clean report)' end)
              when x.node is not null then format('refused declaration %s: %s: %s%s', x.serial, x.fault, x.reason,
                     case when x.fresh then '' else ' (before the resume: waiting for a clean report)' end)
              when n.nothing_owed then 'nothing to apply: its composition no longer differed'
              when s.serial > n.from_serial and d.acknowledged_at is not null
                   and (t.version is null or v.agent_version is not distinct from t.version) then format('applied declaration %s', s.serial)
              when s.serial > n.from_serial and d.acknowledged_at is not null
                then format('applied declaration %s; its agent reports %s, not yet %s', s.serial, coalesce(v.agent_version, 'no version'), t.version)
              when s.serial = n.from_serial then 'released, not yet declared'
              else format('declaration %s not yet reported applied', s.serial) end
    from assignment.rollout_node n
    join assignment.rollout r on r.id = n.rollout
    join assignment.node_serial s on s.node = n.node
    join inventory.enrolled_node e on e.name = n.node  -- a node retired mid-rollout is out of it
    left join assignment.declaration d on d.node = n.node and d.serial = s.serial
    left join assignment.agent_targets() t on t.node = n.node
    left join inventory.node_agent_version v on v.name = n.node
    -- A failure counts against the newest declaration only, and only if told since the last resume.
    left join lateral (select f.*, f.reported_at >= coalesce(r.resumed_at, '-infinity') as fresh from inventory.apply_failure f
                        where f.node = n.node and f.serial >= s.serial and s.serial > n.from_serial) f on true
    left join lateral (select x.*, x.refused_at >= coalesce(r.resumed_at, '-infinity') as fresh from inventory.refusal x
                        where x.node = n.node and x.serial >= s.serial and s.serial > n.from_serial and x.refused_at >= n.released_at) x on true
   where n.rollout = rollout_id
$$;

ALTER FUNCTION assignment.rollout_node_state(rollout_id bigint) OWNER TO mesh_assignment;

--
-- Name: set_agent_feature(text, text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.set_agent_feature(feature_kind text, version text) RETURNS text
    LANGUAGE plpgsql
    AS $_$
begin
  if feature_kind is null or feature_kind !~ '^[a-z][a-z0-9-]{0,19}$'
     or version is null or version !~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$' then
    raise exception 'an agent feature is a resource kind and the first version that applies it, not % at %',
      coalesce(feature_kind, 'null'), coalesce(version, 'null')
      using errcode = 'MSHV4', hint = 'name a kind as declarations do (file, directory, service, ...) and a MAJOR.MINOR.PATCH version, such as 0.2.0';
  end if;
  insert into assignment.agent_feature (kind, first_version) values (feature_kind, version)
    on conflict (kind) do update set first_version = excluded.first_version;
  return version;
end $_$;

ALTER FUNCTION assignment.set_agent_feature(feature_kind text, version text) OWNER TO mesh_assignment;

--
-- Name: set_agent_target(text, text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.set_agent_target(target_version text, node_name text) RETURNS text
    LANGUAGE plpgsql
    AS $$
declare k inventory.agent_skew; c integer[]; a integer[];
begin
  if not exists (select 1 from catalogue.agent_packages p where p.version = target_version) then
    raise exception 'no mesh-host package of version % was added', coalesce(target_version, 'null')
      using errcode = 'MSHZ1', hint = 'add it first: mesh agent add mesh-host_VERSION_ARCH.deb; mesh agent list shows those added';
  end if;
  select * into k from inventory.agent_skew;
  c := inventory.version_parts(k.control_version);
  a := inventory.version_parts(target_version);
  if c is null or not (a[1] = c[1] and a[2] <= c[2] and a[2] >= c[2] - k.minors_behind) then
    raise exception 'mesh-host % is outside the skew rule: the control plane % speaks with %', target_version,
      coalesce(k.control_version, 'of no stated version'),
      case when c is null then 'nothing until mesh serve states its version'
           else format('%s.%s to %s.%s', c[1], greatest(c[2] - k.minors_behind, 0), c[1], c[2]) end
      using errcode = 'MSHZ2', hint = 'upgrade the control plane first (its version bounds the agents it speaks with), or pick a version within the rule';
  end if;
  if node_name is null then
    delete from assignment.agent_target;
    insert into assignment.agent_target (node, version) values ('', target_version);
  else
    if not exists (select 1 from inventory.enrolled_node where name = node_name) then
      raise exception 'no enrolled node named %', node_name using errcode = 'MSH21', hint = 'see mesh node list';
    end if;
    insert into assignment.agent_target (node, version) values (node_name, target_version)
      on conflict (node) do update set version = excluded.version, set_at = now();
  end if;
  return target_version;
end $$;

ALTER FUNCTION assignment.set_agent_target(target_version text, node_name text) OWNER TO mesh_assignment;

--
-- Name: set_declaration_lifetime(interval); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.set_declaration_lifetime(wanted interval) RETURNS interval
    LANGUAGE plpgsql
    AS $$
begin
  if wanted is null or wanted < interval '10 seconds' or wanted > interval '1 year' then
    raise exception 'a declaration lifetime of % is outside 10 seconds to 1 year', wanted using errcode = 'MSH22',
      hint = 'give a lifetime such as 7d, 12h or 30m: mesh freshness --lifetime 7d';
  end if;
  update assignment.freshness_setting set lifetime = date_trunc('second', wanted);
  return date_trunc('second', wanted);
end $$;

ALTER FUNCTION assignment.set_declaration_lifetime(wanted interval) OWNER TO mesh_assignment;

--
-- Name: signed_now(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.signed_now() RETURNS timestamp with time zone
    LANGUAGE sql STABLE
    AS $$
  select date_trunc('second', now())
$$;

ALTER FUNCTION assignment.signed_now() OWNER TO mesh_assignment;

--
-- Name: start_rollout(text[], interval, integer, text[]); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.start_rollout(wave_list text[], wait interval, failing_allowed integer, canaries text[]) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
declare r assignment.rollout := assignment.open_rollout(); sizes integer[]; total integer; stray text; pend text[];
begin
  if r.id is null or r.state <> 'holding' then perform assignment.refuse_move(r, 'start'); end if;
  if wait is null or wait <= interval '0' then
    perform assignment.refuse_setting(format('a wait of %s for a wave to report healthy', coalesce(wait::text, 'nothing')), 'give each wave time to apply and report: --wait-healthy 2m');
  end if;
  if failing_allowed is null or failing_allowed < 0 then
    perform assignment.refuse_setting(format('%s failing nodes allowed', coalesce(failing_allowed::text, 'no number of')), '--max-failing 0 halts on the first failure');
  end if;
  perform assignment.take_declare_turn();
  select coalesce(array_agg(c.node), '{}') into pend
    from assignment.compose_each(null) c
    join assignment.held_nodes() h on h.node = c.node
   where c.changed;
  total := cardinality(pend);
  if total = 0 then
    raise exception 'no held change differs from what the nodes hold'
      using errcode = 'MSH27', hint = 'make the changes first (mesh plan --all shows what is pending), then mesh rollout start';
  end if;
  select c into stray from unnest(coalesce(canaries, '{}')) c where c <> all(pend) limit 1;
  if stray is not null then
    raise exception 'the canary % has no held change', stray
      using errcode = 'MSH26', hint = 'pin with --first only nodes the rollout changes: see mesh plan --all';
  end if;
  sizes := assignment.wave_sizes(wave_list, total);
  insert into assignment.rollout_node (rollout, node, wave, position, from_serial)
  select r.id, o.node,
         (select min(i) from generate_subscripts(sizes, 1) i where sizes[i] >= o.position),
         o.position, s.serial
    from (select p.node, row_number() over (order by array_position(canaries, p.node) nulls last, sha256(convert_to(p.node, 'utf8')))::int as position
            from unnest(pend) p(node)) o
    join assignment.node_serial s on s.node = o.node;
  update assignment.rollout
     set state = 'rolling', waves = wave_list, wait_healthy = wait, max_failing = failing_allowed,
         first = coalesce(canaries, '{}'), started_at = now()
   where id = r.id;
  perform pg_notify('mesh_rollout', r.id::text);
  return r.id;
end $$;

ALTER FUNCTION assignment.start_rollout(wave_list text[], wait interval, failing_allowed integer, canaries text[]) OWNER TO mesh_assignment;

--
-- Name: take_declare_turn(); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.take_declare_turn() RETURNS void
    LANGUAGE sql
    AS $$
  select pg_advisory_xact_lock(assignment.declare_turn_key())
$$;

ALTER FUNCTION assignment.take_declare_turn() OWNER TO mesh_assignment;

--
-- Name: take_owed(integer, timestamp with time zone); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.take_owed(limit_rows integer, due_by timestamp with time zone) RETURNS TABLE(id bigint, node text, kind text, serial bigint, payload bytea)
    LANGUAGE sql
    AS $$
  with owed as (
    select o.id, o.node, o.kind, o.serial from assignment.outbox o
     where o.delivered_at is null and o.next_attempt_at <= due_by
     order by o.id limit limit_rows
     for update skip locked)
  select w.id, w.node, w.kind, w.serial, d.envelope
    from owed w join assignment.declaration d on d.node = w.node and d.serial = w.serial
   order by w.id
$$;

ALTER FUNCTION assignment.take_owed(limit_rows integer, due_by timestamp with time zone) OWNER TO mesh_assignment;

--
-- Name: FUNCTION take_owed(limit_rows integer, due_by timestamp with time zone); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.take_owed(limit_rows integer, due_by timestamp with time zone) IS 'Up to LIMIT_ROWS owed rows due by DUE_BY, locked until the caller''s transaction ends (skip locked: drains never share a row), each with the envelope of the declaration it owes.';

--
-- Name: time_of(text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.time_of(said text) RETURNS timestamp with time zone
    LANGUAGE plpgsql STABLE
    AS $_$
begin
  if said ~ '^[0-9]{1,9}[smhd]$' then
    return now() - (left(said, -1) || case right(said, 1) when 's' then ' seconds' when 'm' then ' minutes'
                                                          when 'h' then ' hours' else ' days' end)::interval;
  end if;
  return said::timestamptz;
exception when data_exception then
  raise exception '% is not a time', coalesce(quote_literal(said), 'nothing') using errcode = 'MSHQ6',
    hint = 'give a timestamp (2026-12-05 12:00, 2026-12-05T12:00:00Z) or an age (90s, 30m, 2h, 7d)';
end $_$;

ALTER FUNCTION assignment.time_of(said text) OWNER TO mesh_assignment;

--
-- Name: FUNCTION time_of(said text); Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON FUNCTION assignment.time_of(said text) IS 'A time as an operator gives it: a timestamp, or an age (30m, 2h, 7d) before now; anything else is refused (MSHQ6).';

--
-- Name: unassign(text, text); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.unassign(module_name text, node_name text) RETURNS boolean
    LANGUAGE sql
    AS $$
  delete from assignment.assignment where module = module_name and node = node_name returning true
$$;

ALTER FUNCTION assignment.unassign(module_name text, node_name text) OWNER TO mesh_assignment;

--
-- Name: wave_sizes(text[], integer); Type: FUNCTION; Schema: assignment; Owner: mesh_assignment
--

CREATE FUNCTION assignment.wave_sizes(waves text[], total integer) RETURNS integer[]
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
declare w text; n integer; prev integer := 0; out integer[] := '{}';
begin
  if coalesce(cardinality(waves), 0) = 0 then
    perform assignment.refuse_setting('no waves', 'give the waves as counts or shares, ending at 100%: --waves 1,10%,50%,100%');
  end if;
  foreach w in array waves loop
    if w ~ '^[0-9]{1,3}%$' and substr(w, 1, length(w) - 1)::int between 1 and 100 then
      n := ceil(total * substr(w, 1, length(w) - 1)::numeric / 100)::int;
    elsif w ~ '^[0-9]{1,9}$' and w::int >= 1 then
      n := least(w::int, total);
    else
      perform assignment.refuse_setting(format('the wave %s: it is not a count or a share', quote_literal(w)),
        'each wave is a count of nodes (1) or a share of them (10%), separated by commas: --waves 1,10%,50%,100%');
    end if;
    if n < prev then
      perform assignment.refuse_setting(format('the wave %s: it reaches fewer nodes (%s) than the one before it (%s)', w, n, prev),
        'waves count the nodes reached so far, so each is at least the one before: --waves 1,10%,50%,100%');
    end if;
    if n > prev then out := out || n; end if;
    prev := n;
  end loop;
  if prev < total then
    perform assignment.refuse_setting(format('waves whose last reaches %s of the %s nodes', prev, total), 'end the waves at every node: --waves 1,10%,100%');
  end if;
  return out;
end $_$;

ALTER FUNCTION assignment.wave_sizes(waves text[], total integer) OWNER TO mesh_assignment;

--
-- Name: append(text, text, jsonb); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.append(event_kind text, event_node text, event_detail jsonb) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'audit'
    AS $$
  insert into audit.event (kind, node, detail) values (event_kind, event_node, event_detail)
$$;

ALTER FUNCTION audit.append(event_kind text, event_node text, event_detail jsonb) OWNER TO mesh_audit;

--
-- Name: chain(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.chain() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
declare last_seq bigint; last_hash bytea;
begin
  perform pg_advisory_xact_lock(hashtext('mesh audit chain'));
  select e.seq, e.hash into last_seq, last_hash from audit.event e order by e.seq desc limit 1;
  if not found then
    last_seq := 0;
    last_hash := decode(repeat('00', 32), 'hex');
  end if;
  new.seq := last_seq + 1;
  new.at := now();
  new.actor := session_user;
  new.role := session_user;
  new.detail := coalesce(new.detail, '{}'::jsonb);
  new.prev_hash := last_hash;
  new.hash := audit.link(last_hash, new);
  return new;
end $$;

ALTER FUNCTION audit.chain() OWNER TO mesh_audit;

--
-- Name: check_history(bigint, text); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.check_history(kept_seq bigint DEFAULT NULL::bigint, kept_hash text DEFAULT NULL::text) RETURNS TABLE(rows bigint, head_seq bigint, head text)
    LANGUAGE plpgsql STABLE
    AS $$
declare p record; b record; found_hash text;
begin
  select * into p from audit.trigger_problems() limit 1;
  if found then
    raise exception 'the audit trigger % on % is not in force: %', p.trigger, p.on_table, p.problem
      using errcode = 'MSH75';
  end if;
  select * into b from audit.verify() limit 1;
  if found then
    raise exception 'the audit history does not match from row % (%, node %, at %): %', b.seq, coalesce(b.kind, '-'), coalesce(b.node, '-'), coalesce(b.at::text, '-'), b.problem
      using errcode = 'MSH71';
  end if;
  if kept_seq is not null then
    select encode(e.hash, 'hex') into found_hash from audit.event e where e.seq = kept_seq;
    if found_hash is null or found_hash <> lower(kept_hash) then
      raise exception 'the audit history no longer reaches the kept head: row % %', kept_seq,
        case when found_hash is null then 'is gone (rows were cut from its end)'
             else format('has hash %s, the kept head says %s (the chain was rewritten)', found_hash, lower(kept_hash)) end
        using errcode = 'MSH76';
    end if;
  end if;
  return query select count(*), coalesce(max(e.seq), 0),
    coalesce((select encode(x.hash, 'hex') from audit.event x order by x.seq desc limit 1), repeat('0', 64))
    from audit.event e;
end $$;

ALTER FUNCTION audit.check_history(kept_seq bigint, kept_hash text) OWNER TO mesh_audit;

--
-- Name: FUNCTION check_history(kept_seq bigint, kept_hash text); Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON FUNCTION audit.check_history(kept_seq bigint, kept_hash text) IS 'C3: the audit triggers in force, the chain whole, and (given) the kept head still on it; refuses with the first problem, else the length and head.';

--
-- Name: guard_triggers(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.guard_triggers() RETURNS event_trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
declare p record;
begin
  if to_regprocedure('audit.trigger_problems()') is null then
    return;
  end if;
  select * into p from audit.trigger_problems() x where x.problem <> 'its table is gone' limit 1;
  if found then
    raise exception 'the audit trigger % on % would be %: refused (the history records every change to that table)',
      p.trigger, p.on_table, case p.problem when 'it is disabled' then 'disabled' else 'gone' end
      using errcode = 'MSH74';
  end if;
end $$;

ALTER FUNCTION audit.guard_triggers() OWNER TO mesh_audit;

--
-- Name: event; Type: TABLE; Schema: audit; Owner: mesh_audit
--

CREATE TABLE audit.event (
    seq bigint NOT NULL,
    at timestamp with time zone NOT NULL,
    kind text NOT NULL,
    node text,
    detail jsonb NOT NULL,
    actor text NOT NULL,
    role text NOT NULL,
    prev_hash bytea NOT NULL,
    hash bytea NOT NULL,
    CONSTRAINT event_detail_check CHECK ((jsonb_typeof(detail) = 'object'::text)),
    CONSTRAINT event_hash_check CHECK ((octet_length(hash) = 32)),
    CONSTRAINT event_prev_hash_check CHECK ((octet_length(prev_hash) = 32))
);

ALTER TABLE audit.event OWNER TO mesh_audit;

--
-- Name: TABLE event; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON TABLE audit.event IS 'The history, append-only and hash-chained (C3): nothing here is ever changed or removed.';

--
-- Name: COLUMN event.seq; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.event.seq IS '1, 2, 3 ... with no gap: the chain''s order, set by the append.';

--
-- Name: COLUMN event.at; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.event.at IS 'When: the time of the transaction that made the change.';

--
-- Name: COLUMN event.kind; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.event.kind IS 'What happened (audit.kind).';

--
-- Name: COLUMN event.node; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.event.node IS 'The node it concerns, when one does.';

--
-- Name: COLUMN event.detail; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.event.detail IS 'The facts of the change (serial, digest, fault and reason, ...): never a secret.';

--
-- Name: COLUMN event.actor; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.event.actor IS 'Who: the database role of the session that made the change (rows written before that rule carry the name the client gave itself).';

--
-- Name: COLUMN event.role; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.event.role IS 'The database role of the session that made the change.';

--
-- Name: COLUMN event.prev_hash; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.event.prev_hash IS 'The hash of row seq - 1 (32 zero bytes for row 1).';

--
-- Name: COLUMN event.hash; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.event.hash IS 'sha256(prev_hash || audit.row_text(row)).';

--
-- Name: link(bytea, audit.event); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.link(prev bytea, e audit.event) RETURNS bytea
    LANGUAGE sql STABLE
    AS $$
  select sha256(prev || convert_to(audit.row_text(e), 'UTF8'))
$$;

ALTER FUNCTION audit.link(prev bytea, e audit.event) OWNER TO mesh_audit;

--
-- Name: on_broker(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.on_broker() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'audit'
    AS $$
begin
  if tg_op = 'DELETE' then
    perform audit.append('broker-removed', old.node, jsonb_build_object('address', old.address, 'fingerprint', old.fingerprint));
  else
    perform audit.append(case when tg_op = 'INSERT' then 'broker-added' else 'broker-changed' end, new.node,
      jsonb_strip_nulls(jsonb_build_object('address', new.address, 'fingerprint', new.fingerprint, 'node', new.node)));
  end if;
  return null;
end $$;

ALTER FUNCTION audit.on_broker() OWNER TO mesh_audit;

--
-- Name: on_declaration(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.on_declaration() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'audit'
    AS $$
begin
  insert into audit.event (kind, node, detail)
  values ('declared', new.node, jsonb_build_object('serial', new.serial, 'digest', encode(new.digest, 'hex')));
  return null;
end $$;

ALTER FUNCTION audit.on_declaration() OWNER TO mesh_audit;

--
-- Name: on_freeze(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.on_freeze() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'audit'
    AS $$
declare f assignment.freeze := coalesce(new, old);
begin
  perform audit.append('freeze', null, jsonb_strip_nulls(jsonb_build_object('freeze', f.id,
    'act', case when tg_op = 'INSERT' then 'made' when tg_op = 'DELETE' then 'removed' else 'overridden' end,
    'from', f.from_at, 'until', f.until_at, 'site', f.site, 'module', f.module, 'reason', f.override_reason)));
  return null;
end $$;

ALTER FUNCTION audit.on_freeze() OWNER TO mesh_audit;

--
-- Name: on_node(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.on_node() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'audit'
    AS $$
begin
  if tg_op = 'DELETE' then
    perform audit.append('retired', old.name, jsonb_build_object('site', old.site, 'enrolled_at', old.enrolled_at));
  else
    perform audit.append('enrolled', new.name, jsonb_build_object('site', new.site, 'dialable', new.dialable,
      'identity_key', encode(new.identity_key, 'hex'), 'overlay_key', encode(new.overlay_key, 'hex'), 'sealing_key', encode(new.sealing_key, 'hex')));
  end if;
  return null;
end $$;

ALTER FUNCTION audit.on_node() OWNER TO mesh_audit;

--
-- Name: on_refusal(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.on_refusal() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'audit'
    AS $$
begin
  if new.times > 1 then return null; end if;
  perform audit.append('refused-' || new.fault, new.node, jsonb_build_object('serial', new.serial, 'fault', new.fault, 'reason', new.reason));
  return null;
end $$;

ALTER FUNCTION audit.on_refusal() OWNER TO mesh_audit;

--
-- Name: on_rollout(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.on_rollout() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'audit'
    AS $$
begin
  perform audit.append('rollout', null, jsonb_strip_nulls(jsonb_build_object('rollout', new.id, 'state', new.state, 'wave', new.wave,
    'waves', array_to_string(new.waves, ','), 'reason', new.reason)));
  return null;
end $$;

ALTER FUNCTION audit.on_rollout() OWNER TO mesh_audit;

--
-- Name: on_secret(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.on_secret() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'audit'
    AS $$
begin
  perform audit.append(case when tg_op = 'INSERT' then 'secret-created' else 'rotated' end, null,
    jsonb_build_object('secret', new.name, 'origin', new.origin, 'generation', new.generation));
  return null;
end $$;

ALTER FUNCTION audit.on_secret() OWNER TO mesh_audit;

--
-- Name: on_token(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.on_token() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'audit'
    AS $$
begin
  if tg_op = 'INSERT' then
    perform audit.append('token-issued', new.node, jsonb_build_object('token', encode(new.token_hash, 'hex'), 'expires_at', new.expires_at));
  else
    perform audit.append('token-spent', new.node, jsonb_build_object('token', encode(new.token_hash, 'hex'), 'identity_key', encode(new.spent_by, 'hex')));
  end if;
  return null;
end $$;

ALTER FUNCTION audit.on_token() OWNER TO mesh_audit;

--
-- Name: refuse_change(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.refuse_change() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  raise exception 'the audit history is append-only: % on audit.event refused', tg_op using errcode = 'MSH70';
end $$;

ALTER FUNCTION audit.refuse_change() OWNER TO mesh_audit;

--
-- Name: refuse_truncate(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.refuse_truncate() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  raise exception 'TRUNCATE on %.% refused: the history records each row removed from it, and a truncate removes rows with no word', tg_table_schema, tg_table_name
    using errcode = 'MSH79',
    hint = 'delete the rows instead (each delete is recorded); mesh node retire removes a node';
end $$;

ALTER FUNCTION audit.refuse_truncate() OWNER TO mesh_audit;

--
-- Name: row_text(audit.event); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.row_text(e audit.event) RETURNS text
    LANGUAGE sql STABLE
    AS $$
  select jsonb_build_array(e.seq, to_char(e.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                           e.kind, e.node, e.detail, e.actor, e.role)::text
$$;

ALTER FUNCTION audit.row_text(e audit.event) OWNER TO mesh_audit;

--
-- Name: trigger_problems(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.trigger_problems() RETURNS TABLE(on_table text, trigger text, problem text)
    LANGUAGE sql STABLE
    SET search_path TO 'pg_catalog'
    AS $$
  select w.on_table, w.trigger,
         case when c.oid is null then 'its table is gone'
              when t.oid is null then 'it is missing'
              else 'it is disabled' end
    from audit.watched w
    left join (pg_class c join pg_namespace n on n.oid = c.relnamespace)
      on format('%I.%I', n.nspname, c.relname) = w.on_table and c.relkind in ('r', 'p')
    left join pg_trigger t on t.tgrelid = c.oid and t.tgname = w.trigger
   where t.oid is null or t.tgenabled not in ('O', 'A')
   order by w.on_table, w.trigger
$$;

ALTER FUNCTION audit.trigger_problems() OWNER TO mesh_audit;

--
-- Name: FUNCTION trigger_problems(); Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON FUNCTION audit.trigger_problems() IS 'C3: each audit trigger that is missing, disabled or whose table is gone; no row when all are in force.';

--
-- Name: verify(); Type: FUNCTION; Schema: audit; Owner: mesh_audit
--

CREATE FUNCTION audit.verify() RETURNS TABLE(seq bigint, kind text, node text, at timestamp with time zone, problem text)
    LANGUAGE plpgsql STABLE
    AS $$
declare e audit.event; prev bytea := decode(repeat('00', 32), 'hex'); n bigint := 0;
begin
  for e in select * from audit.event x order by x.seq loop
    n := n + 1;
    if e.seq <> n then
      return query select e.seq, e.kind, e.node, e.at, format('rows %s to %s are missing', n, e.seq - 1);
      return;
    end if;
    if e.prev_hash <> prev then
      return query select e.seq, e.kind, e.node, e.at, format('it does not follow row %s (its prev_hash is not that row''s hash)', n - 1);
      return;
    end if;
    if e.hash <> audit.link(prev, e) then
      return query select e.seq, e.kind, e.node, e.at, 'its hash does not match its contents: the row was changed after it was written'::text;
      return;
    end if;
    prev := e.hash;
  end loop;
end $$;

ALTER FUNCTION audit.verify() OWNER TO mesh_audit;

--
-- Name: FUNCTION verify(); Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON FUNCTION audit.verify() IS 'C3: recompute the chain; the first row that does not match, or no row when the history is whole.';

--
-- Name: add_agent_package(text, text, bigint, integer); Type: FUNCTION; Schema: catalogue; Owner: mesh_catalogue
--

CREATE FUNCTION catalogue.add_agent_package(package_version text, package_sha256 text, package_size bigint, chunk_count integer) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
declare was catalogue.agent_package;
begin
  select * into was from catalogue.agent_package p where p.version = package_version;
  if found then
    if was.sha256 = package_sha256 then return false; end if;
    raise exception 'mesh-host % was added before with other bytes (sha256 %)', package_version, was.sha256
      using errcode = 'MSHZ0', hint = 'a version names one package: build the new one with a new version';
  end if;
  insert into catalogue.agent_package (version, sha256, size, chunks)
    values (package_version, package_sha256, package_size, chunk_count);
  return true;
end $$;

ALTER FUNCTION catalogue.add_agent_package(package_version text, package_sha256 text, package_size bigint, chunk_count integer) OWNER TO mesh_catalogue;

--
-- Name: placements(); Type: FUNCTION; Schema: catalogue; Owner: mesh_catalogue
--

CREATE FUNCTION catalogue.placements() RETURNS TABLE(module text, nodes text[])
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  return query select p.module, array_agg(p.node order by p.node) from assignment.placement p group by p.module;
end $$;

ALTER FUNCTION catalogue.placements() OWNER TO mesh_catalogue;

--
-- Name: put_agent_chunk(text, integer, bytea); Type: FUNCTION; Schema: catalogue; Owner: mesh_catalogue
--

CREATE FUNCTION catalogue.put_agent_chunk(package_sha256 text, chunk_n integer, chunk bytea) RETURNS void
    LANGUAGE sql
    AS $$
  insert into catalogue.agent_chunk (sha256, n, bytes) values (package_sha256, chunk_n, chunk)
$$;

ALTER FUNCTION catalogue.put_agent_chunk(package_sha256 text, chunk_n integer, chunk bytea) OWNER TO mesh_catalogue;

--
-- Name: put_module(text, jsonb, text); Type: FUNCTION; Schema: catalogue; Owner: mesh_catalogue
--

CREATE FUNCTION catalogue.put_module(module_name text, module_resources jsonb, module_origin text) RETURNS TABLE(name text, version integer)
    LANGUAGE plpgsql
    AS $$
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

ALTER FUNCTION catalogue.put_module(module_name text, module_resources jsonb, module_origin text) OWNER TO mesh_catalogue;

--
-- Name: FUNCTION put_module(module_name text, module_resources jsonb, module_origin text); Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON FUNCTION catalogue.put_module(module_name text, module_resources jsonb, module_origin text) IS 'Store a module (a new version when its resources changed). Refuses kinds the mesh composes itself (MSH31).';

--
-- Name: record_build_progress(uuid, text, text); Type: FUNCTION; Schema: catalogue; Owner: mesh_catalogue
--

CREATE FUNCTION catalogue.record_build_progress(request_id uuid, builder_name text, progress_line text) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
begin
  update catalogue.build_request set state = 'building' where id = request_id and state = 'requested';
  if not exists (select 1 from catalogue.build_request where id = request_id) then return false; end if;
  insert into catalogue.build_progress (request_id, builder, line) values (request_id, builder_name, left(progress_line, 2000));
  return true;
end $$;

ALTER FUNCTION catalogue.record_build_progress(request_id uuid, builder_name text, progress_line text) OWNER TO mesh_catalogue;

--
-- Name: record_build_result(uuid, text, boolean, text, text, timestamp with time zone, text, text, text, text); Type: FUNCTION; Schema: catalogue; Owner: mesh_catalogue
--

CREATE FUNCTION catalogue.record_build_result(request_id uuid, builder_name text, build_ok boolean, commit_sha text, source_head text, head_seen_at timestamp with time zone, image text, digest text, error text, log_tail text) RETURNS text
    LANGUAGE plpgsql
    AS $$
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

ALTER FUNCTION catalogue.record_build_result(request_id uuid, builder_name text, build_ok boolean, commit_sha text, source_head text, head_seen_at timestamp with time zone, image text, digest text, error text, log_tail text) OWNER TO mesh_catalogue;

--
-- Name: record_source_head(text, text, timestamp with time zone); Type: FUNCTION; Schema: catalogue; Owner: mesh_catalogue
--

CREATE FUNCTION catalogue.record_source_head(module_name text, commit_sha text, seen_at timestamp with time zone) RETURNS boolean
    LANGUAGE sql
    AS $$
  update catalogue.source set head_commit = commit_sha, head_seen_at = seen_at
   where module = module_name and (head_seen_at is null or head_seen_at <= seen_at)
  returning true
$$;

ALTER FUNCTION catalogue.record_source_head(module_name text, commit_sha text, seen_at timestamp with time zone) OWNER TO mesh_catalogue;

--
-- Name: request_build(uuid, text, text); Type: FUNCTION; Schema: catalogue; Owner: mesh_catalogue
--

CREATE FUNCTION catalogue.request_build(request_id uuid, module_name text, build_ref text) RETURNS TABLE(git_url text, path text, ref text, track text)
    LANGUAGE plpgsql
    AS $$
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

ALTER FUNCTION catalogue.request_build(request_id uuid, module_name text, build_ref text) OWNER TO mesh_catalogue;

--
-- Name: set_source(text, text, text, text, text); Type: FUNCTION; Schema: catalogue; Owner: mesh_catalogue
--

CREATE FUNCTION catalogue.set_source(module_name text, source_url text, source_path text, source_ref text, source_image text) RETURNS text
    LANGUAGE sql
    AS $$
  insert into catalogue.source as s (module, git_url, path, ref, image)
  values (module_name, source_url, source_path, source_ref, coalesce(source_image, '127.0.0.1:5000/' || module_name))
  on conflict (module) do update set
    git_url = excluded.git_url, path = excluded.path, ref = excluded.ref, image = coalesce(source_image, s.image), updated_at = now(),
    head_commit = case when (s.git_url, s.ref) = (excluded.git_url, excluded.ref) then s.head_commit end,
    head_seen_at = case when (s.git_url, s.ref) = (excluded.git_url, excluded.ref) then s.head_seen_at end
  returning s.image
$$;

ALTER FUNCTION catalogue.set_source(module_name text, source_url text, source_path text, source_ref text, source_image text) OWNER TO mesh_catalogue;

--
-- Name: withdraw_build_request(uuid); Type: FUNCTION; Schema: catalogue; Owner: mesh_catalogue
--

CREATE FUNCTION catalogue.withdraw_build_request(request_id uuid) RETURNS boolean
    LANGUAGE sql
    AS $$
  delete from catalogue.build_request r where r.id = request_id and r.state = 'requested'
     and not exists (select 1 from catalogue.build_result b where b.request_id = r.id)
  returning true
$$;

ALTER FUNCTION catalogue.withdraw_build_request(request_id uuid) OWNER TO mesh_catalogue;

--
-- Name: check_answer(text, text, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.check_answer(node_name text, answer_kind text, answer_digest text) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
declare
  last timestamptz;
  every interval;
begin
  select a.answered_at, s.answer_every into last, every
    from inventory.answered a cross join inventory.bounds_setting s
   where a.node = node_name and a.kind = answer_kind and a.answer = answer_digest;
  if last is not null and last > now() - every then
    raise exception '% asked for a % again % after the same answer, within %', node_name, answer_kind,
      date_trunc('second', now() - last), every
      using errcode = 'MSHS3', hint = 'the answer given before stands; the same is given again after the interval, a new one at once';
  end if;
end $$;

ALTER FUNCTION inventory.check_answer(node_name text, answer_kind text, answer_digest text) OWNER TO mesh_inventory;

--
-- Name: check_broker(text, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.check_broker(address text, fingerprint text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    AS $_$
begin
  -- CASE, not OR: the port is cast only once the pattern held.
  if not coalesce(case when address ~ '^[A-Za-z0-9.-]{1,253}:[0-9]{1,5}$' then split_part(address, ':', 2)::integer between 1 and 65535 end, false) then
    raise exception 'broker address % is not HOST:PORT', coalesce(quote_literal(address), 'null') using errcode = 'MSH10',
      hint = 'give the address nodes dial over TLS as HOST:PORT, e.g. mq2.example.net:5671';
  end if;
  if fingerprint is null or fingerprint !~ '^([0-9A-F]{2}:){31}[0-9A-F]{2}$' then
    raise exception 'broker fingerprint % is not a SHA-256 fingerprint', coalesce(quote_literal(fingerprint), 'null') using errcode = 'MSH11',
      hint = 'give the certificate''s SHA-256 as 32 upper-case hex pairs joined by colons: openssl x509 -noout -fingerprint -sha256 -in CERT';
  end if;
end $_$;

ALTER FUNCTION inventory.check_broker(address text, fingerprint text) OWNER TO mesh_inventory;

--
-- Name: check_fleet_filter(integer, text, text, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.check_fleet_filter(page_size integer, name_prefix text, site_name text, state_class text) RETURNS void
    LANGUAGE plpgsql IMMUTABLE
    AS $$
begin
  if state_class is not null and state_class not in ('here', 'wedged', 'away', 'never', 'stale') then
    raise exception 'there is no state %: a page is narrowed to here, wedged, away, never or stale', quote_literal(state_class)
      using errcode = 'MSHT2', hint = 'pick one of here, wedged, away (out of touch), never (never spoken) or stale';
  end if;
  if page_size is not null and (page_size < 1 or page_size > 1000) then
    raise exception 'a page of % rows is refused: a page holds 1 to 1000', page_size
      using errcode = 'MSHT3', hint = 'give a page size from 1 to 1000; the whole fleet is mesh node list without --limit';
  end if;
  if name_prefix = '' or site_name = '' then
    raise exception 'an empty prefix or site narrows nothing'
      using errcode = 'MSHT4', hint = 'leave the filter out, or give at least one character';
  end if;
end $$;

ALTER FUNCTION inventory.check_fleet_filter(page_size integer, name_prefix text, site_name text, state_class text) OWNER TO mesh_inventory;

--
-- Name: FUNCTION check_fleet_filter(page_size integer, name_prefix text, site_name text, state_class text); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.check_fleet_filter(page_size integer, name_prefix text, site_name text, state_class text) IS 'Refuses a fleet page filter: an unknown state class (MSHT2), a page size outside 1..1000 (MSHT3), an empty prefix or site (MSHT4).';

--
-- Name: clear_failure(); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.clear_failure() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  delete from inventory.apply_failure f where f.node = new.node and f.serial <= new.serial;
  return null;
end $$;

ALTER FUNCTION inventory.clear_failure() OWNER TO mesh_inventory;

--
-- Name: close_console_session(bytea); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.close_console_session(session_hash bytea) RETURNS void
    LANGUAGE sql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  delete from inventory.console_session s where s.session_hash = close_console_session.session_hash
$$;

ALTER FUNCTION inventory.close_console_session(session_hash bytea) OWNER TO mesh_inventory;

--
-- Name: FUNCTION close_console_session(session_hash bytea); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.close_console_session(session_hash bytea) IS 'Sign out: the console session of this cookie hash is closed.';

--
-- Name: compare_debian_version(text, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.compare_debian_version(a text, b text) RETURNS integer
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
  select case when ka < kb then -1 when ka > kb then 1 else 0 end
    from (select inventory.debian_version_key(a) as ka, inventory.debian_version_key(b) as kb) k
$$;

ALTER FUNCTION inventory.compare_debian_version(a text, b text) OWNER TO mesh_inventory;

--
-- Name: FUNCTION compare_debian_version(a text, b text); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.compare_debian_version(a text, b text) IS '-1, 0 or 1: A is lower than, equal to or higher than B as dpkg --compare-versions orders Debian versions.';

--
-- Name: console_session_open(bytea); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.console_session_open(session_hash bytea) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
  select exists (select 1 from inventory.console_session s
                  where s.session_hash = console_session_open.session_hash and s.expires_at > now())
$$;

ALTER FUNCTION inventory.console_session_open(session_hash bytea) OWNER TO mesh_inventory;

--
-- Name: debian_part_key(text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.debian_part_key(part text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $$
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

ALTER FUNCTION inventory.debian_part_key(part text) OWNER TO mesh_inventory;

--
-- Name: FUNCTION debian_part_key(part text); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.debian_part_key(part text) IS 'The upstream or revision part of a Debian version as hex of a key whose byte order is dpkg''s order.';

--
-- Name: debian_version_key(text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.debian_version_key(version text) RETURNS bytea
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
    AS $_$
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
end $_$;

ALTER FUNCTION inventory.debian_version_key(version text) OWNER TO mesh_inventory;

--
-- Name: FUNCTION debian_version_key(version text); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.debian_version_key(version text) IS 'A Debian version as a key whose byte order is dpkg''s: a < b exactly when dpkg --compare-versions a lt b.';

--
-- Name: delivered_declarations(); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.delivered_declarations() RETURNS TABLE(node text, serial bigint, delivered_at timestamp with time zone)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog'
    AS $$
begin
  return query select d.node, d.serial, d.delivered_at from assignment.delivered_newest d;
end $$;

ALTER FUNCTION inventory.delivered_declarations() OWNER TO mesh_inventory;

--
-- Name: describe_age(interval); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.describe_age(age interval) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
  select case
    when age < interval '1 minute' then floor(extract(epoch from age))::int || 's'
    when age < interval '1 hour'   then floor(extract(epoch from age) / 60)::int || 'm'
    when age < interval '1 day'    then floor(extract(epoch from age) / 3600)::int || 'h'
    else floor(extract(epoch from age) / 86400)::int || 'd' end
$$;

ALTER FUNCTION inventory.describe_age(age interval) OWNER TO mesh_inventory;

--
-- Name: fleet_counts(text, text, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.fleet_counts(name_prefix text DEFAULT NULL::text, site_name text DEFAULT NULL::text, state_class text DEFAULT NULL::text) RETURNS TABLE(nodes bigint, here bigint, wedged bigint, away bigint, never bigint, stale bigint, matching bigint)
    LANGUAGE plpgsql STABLE
    AS $$
begin
  perform inventory.check_fleet_filter(null, name_prefix, site_name, state_class);
  return query
  select count(*),
         count(*) filter (where n.state = 'here'),
         count(*) filter (where n.state = 'wedged'),
         count(*) filter (where n.state like 'out of touch%'),
         count(*) filter (where n.state = 'never spoken'),
         count(*) filter (where n.stale),
         count(*) filter (where (name_prefix is null or starts_with(n.name, name_prefix))
                            and (site_name is null or n.site = site_name)
                            and (state_class is null or inventory.node_state_class(n.state, n.stale, state_class)))
    from (select s.name, s.site, s.state, s.stale from inventory.node_status s offset 0) n;
end $$;

ALTER FUNCTION inventory.fleet_counts(name_prefix text, site_name text, state_class text) OWNER TO mesh_inventory;

--
-- Name: FUNCTION fleet_counts(name_prefix text, site_name text, state_class text); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.fleet_counts(name_prefix text, site_name text, state_class text) IS 'The fleet''s nodes by state (here, wedged, away, never spoken, stale) and how many pass the fleet page''s filter.';

--
-- Name: fleet_metrics(); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.fleet_metrics() RETURNS TABLE(metric text, labels jsonb, value double precision)
    LANGUAGE sql STABLE
    SET jit TO 'off'
    AS $$
  with s as (
    select case when st.state in ('here', 'wedged') then st.state
                when st.state = 'never spoken' then 'never_spoken'
                else 'out_of_touch' end as state,
           st.stale, coalesce(st.failing, 0) > 0 as failing
      from inventory.node_status st)
  select 'mesh_nodes', jsonb_build_object('state', k.state), (select count(*) from s where s.state = k.state)::float8
    from (values ('here'), ('wedged'), ('out_of_touch'), ('never_spoken')) k(state)
  union all
  select 'mesh_nodes_stale', '{}', (select count(*) from s where s.stale)::float8
  union all
  select 'mesh_nodes_failing', '{}', (select count(*) from s where s.failing)::float8
  union all
  select 'mesh_drift_fighting_resources', '{}', (select count(*) from inventory.drift d where d.fighting)::float8
  union all
  (select 'mesh_nodes_by_agent_version', jsonb_build_object('version', coalesce(n.agent_version, 'unknown')), count(*)::float8
     from inventory.node n group by coalesce(n.agent_version, 'unknown'))
  union all
  select 'mesh_nodes_outdated', '{}', (select count(*) from inventory.agent_versions a where a.outdated)::float8
$$;

ALTER FUNCTION inventory.fleet_metrics() OWNER TO mesh_inventory;

--
-- Name: FUNCTION fleet_metrics(); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.fleet_metrics() IS 'The fleet counted for /metrics: nodes by state (here, out_of_touch, never_spoken), stale, failing, and resources fighting drift. No per-node rows.';

--
-- Name: fleet_page(text, integer, text, text, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.fleet_page(after_name text DEFAULT NULL::text, page_size integer DEFAULT NULL::integer, name_prefix text DEFAULT NULL::text, site_name text DEFAULT NULL::text, state_class text DEFAULT NULL::text) RETURNS TABLE(name text, site text, state text, stale boolean, holds_until timestamp with time zone, last_seen timestamp with time zone, enrolled_at timestamp with time zone, reported_serial bigint, holds integer, failing integer, reported_at timestamp with time zone, agent_version text, report_age text, owed_serial bigint, outdated boolean, agent_why text)
    LANGUAGE plpgsql
    AS $_$
begin
  perform inventory.check_fleet_filter(page_size, name_prefix, site_name, state_class);
  return query execute $q$
  with page as materialized (
    select * from inventory.node_status n
     where ($1::text is null or n.name > $1::text)
       and ($3::text is null or starts_with(n.name, $3::text))
       and ($4::text is null or n.site = $4::text)
       and ($5::text is null or inventory.node_state_class(n.state, n.stale, $5::text))
     order by n.name
     limit $2::integer)
  select s.name, s.site, s.state, s.stale, s.holds_until, s.last_seen, s.enrolled_at, s.reported_serial, s.holds, s.failing, s.reported_at,
         s.agent_version,
         case when s.reported_at is null then 'never reported' else inventory.describe_age(s.report_age) end,
         -- The newest declaration not yet delivered, read through the view assignment grants inventory (W1).
         (select max(p.serial) from assignment.pending_delivery p where p.node = s.name and p.kind = 'declaration'),
         v.outdated, v.why
    from page s
    join (select a.name, a.outdated, a.why from inventory.agent_versions a
           where a.name = any(array(select g.name from page g))) v on v.name = s.name
   order by s.name $q$
  using after_name, page_size, name_prefix, site_name, state_class;
end $_$;

ALTER FUNCTION inventory.fleet_page(after_name text, page_size integer, name_prefix text, site_name text, state_class text) OWNER TO mesh_inventory;

--
-- Name: FUNCTION fleet_page(after_name text, page_size integer, name_prefix text, site_name text, state_class text); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.fleet_page(after_name text, page_size integer, name_prefix text, site_name text, state_class text) IS 'One page of the fleet in name order: node_status with the declaration owed and the agent''s standing, after a name (keyset), narrowed by name prefix, site and state class. The console''s fleet page and mesh node list read it.';

--
-- Name: identity_of(text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.identity_of(node_name text) RETURNS bytea
    LANGUAGE sql STABLE
    AS $$
  select identity_key from inventory.node where name = node_name and enrolled_at is not null
$$;

ALTER FUNCTION inventory.identity_of(node_name text) OWNER TO mesh_inventory;

--
-- Name: issue_console_token(bytea, interval); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.issue_console_token(token_hash bytea, ttl interval) RETURNS timestamp with time zone
    LANGUAGE plpgsql
    AS $$
declare expires timestamptz := now() + ttl;
begin
  if ttl <= interval '0' then
    raise exception 'a sign-in link must live for some time, not %', ttl using errcode = 'MSH08';
  end if;
  delete from inventory.console_token t where t.spent_at is not null or t.expires_at <= now();
  delete from inventory.console_session s where s.expires_at <= now();
  insert into inventory.console_token (token_hash, expires_at) values (issue_console_token.token_hash, expires);
  return expires;
end $$;

ALTER FUNCTION inventory.issue_console_token(token_hash bytea, ttl interval) OWNER TO mesh_inventory;

--
-- Name: issue_token(text, bytea, text, text, interval); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.issue_token(node_name text, token_hash bytea, node_site text, node_dialable text, ttl interval) RETURNS timestamp with time zone
    LANGUAGE plpgsql
    AS $$
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

ALTER FUNCTION inventory.issue_token(node_name text, token_hash bytea, node_site text, node_dialable text, ttl interval) OWNER TO mesh_inventory;

--
-- Name: keep_here_since(); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.keep_here_since() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  new.here_since := new.last_seen;
  return new;
end $$;

ALTER FUNCTION inventory.keep_here_since() OWNER TO mesh_inventory;

--
-- Name: load_advisory(jsonb); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.load_advisory(doc jsonb) RETURNS integer
    LANGUAGE plpgsql
    AS $_$
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
end $_$;

ALTER FUNCTION inventory.load_advisory(doc jsonb) OWNER TO mesh_inventory;

--
-- Name: mark_answered(text, text, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.mark_answered(node_name text, answer_kind text, answer_digest text) RETURNS void
    LANGUAGE sql
    AS $$
  insert into inventory.answered (node, kind, answer)
  select node_name, answer_kind, answer_digest where exists (select 1 from inventory.node n where n.name = node_name)
  on conflict (node, kind) do update set answer = excluded.answer, answered_at = now()
$$;

ALTER FUNCTION inventory.mark_answered(node_name text, answer_kind text, answer_digest text) OWNER TO mesh_inventory;

--
-- Name: mark_heard(text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.mark_heard(node_name text) RETURNS boolean
    LANGUAGE sql
    AS $$
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null returning true
$$;

ALTER FUNCTION inventory.mark_heard(node_name text) OWNER TO mesh_inventory;

--
-- Name: mark_heard_many(text[]); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.mark_heard_many(node_names text[]) RETURNS integer
    LANGUAGE sql
    AS $$
  with moved as (
    update inventory.node set last_seen = now()
     where name = any(node_names) and enrolled_at is not null returning 1)
  select count(*)::int from moved
$$;

ALTER FUNCTION inventory.mark_heard_many(node_names text[]) OWNER TO mesh_inventory;

--
-- Name: node_state_class(text, boolean, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.node_state_class(state text, stale boolean, wanted text) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
  select case wanted
    when 'here' then state = 'here'
    when 'wedged' then state = 'wedged'
    when 'away' then state like 'out of touch%'
    when 'never' then state = 'never spoken'
    when 'stale' then stale
  end
$$;

ALTER FUNCTION inventory.node_state_class(state text, stale boolean, wanted text) OWNER TO mesh_inventory;

--
-- Name: FUNCTION node_state_class(state text, stale boolean, wanted text); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.node_state_class(state text, stale boolean, wanted text) IS 'Whether a node_status row (its state and stale) is of the class WANTED: here, wedged, away (out of touch), never (never spoken) or stale.';

--
-- Name: notify_console(); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.notify_console() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
begin
  perform pg_notify('mesh_inventory_changed', tg_table_name);
  return null;
end $$;

ALTER FUNCTION inventory.notify_console() OWNER TO mesh_inventory;

--
-- Name: packages_digest(text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.packages_digest(node_name text) RETURNS text
    LANGUAGE sql STABLE
    AS $$
  select encode(sha256(convert_to(coalesce(string_agg(
           p.name || E'\t' || p.arch || E'\t' || p.version || E'\t' || p.source || E'\n', ''
           order by p.name collate "C", p.arch collate "C"), ''), 'UTF8')), 'hex')
    from inventory.node_package p where p.node = node_name
$$;

ALTER FUNCTION inventory.packages_digest(node_name text) OWNER TO mesh_inventory;

--
-- Name: put_broker(text, text, text, text, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.put_broker(address text, fingerprint text, home_address text, home_fingerprint text, node_name text DEFAULT NULL::text, OUT outcome text, OUT fingerprint_pinned text, OUT home_recorded boolean) RETURNS record
    LANGUAGE plpgsql
    AS $$
declare
  fp constant text := upper(btrim(fingerprint));
  home_fp constant text := upper(btrim(home_fingerprint));
  was inventory.broker;
begin
  home_recorded := false;
  fingerprint_pinned := fp;
  perform inventory.check_broker(address, fp);
  perform inventory.check_broker(home_address, home_fp);
  if node_name is not null and not exists (select 1 from inventory.node n where n.name = node_name and n.enrolled_at is not null) then
    raise exception 'node % is not enrolled, so it cannot run broker %', node_name, address using errcode = 'MSH13',
      hint = 'enrol it first (mesh token issue NAME, then mesh-host enrol on it), or leave out --node; see mesh node list';
  end if;
  if home_address <> address and not exists (select 1 from inventory.broker) then
    insert into inventory.broker (address, fingerprint) values (home_address, home_fp)
    on conflict on constraint broker_pkey do nothing;
    home_recorded := found;
  end if;
  select * into was from inventory.broker b where b.address = put_broker.address for update;
  if not found then
    insert into inventory.broker (address, fingerprint, node) values (put_broker.address, fp, node_name)
    on conflict on constraint broker_pkey do nothing;
    -- A concurrent add of the same address won the insert: this one is a put over it.
    if found then outcome := 'added'; return; end if;
    select * into was from inventory.broker b where b.address = put_broker.address for update;
  end if;
  if was.fingerprint = fp and was.node is not distinct from node_name then outcome := 'unchanged'; return; end if;
  update inventory.broker b set fingerprint = fp, node = node_name where b.address = put_broker.address;
  outcome := 'changed';
end $$;

ALTER FUNCTION inventory.put_broker(address text, fingerprint text, home_address text, home_fingerprint text, node_name text, OUT outcome text, OUT fingerprint_pinned text, OUT home_recorded boolean) OWNER TO mesh_inventory;

--
-- Name: FUNCTION put_broker(address text, fingerprint text, home_address text, home_fingerprint text, node_name text, OUT outcome text, OUT fingerprint_pinned text, OUT home_recorded boolean); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.put_broker(address text, fingerprint text, home_address text, home_fingerprint text, node_name text, OUT outcome text, OUT fingerprint_pinned text, OUT home_recorded boolean) IS 'Add a broker or change its fingerprint or node: added, changed or unchanged, with the fingerprint as stored (upper-case) and whether the home''s broker (HOME_ADDRESS, HOME_FINGERPRINT from broker.json) was recorded first because the table was empty. Refuses a malformed address (MSH10) or fingerprint (MSH11), its own or the home''s, and a node that is not enrolled (MSH13).';

--
-- Name: receive_report(text, text, bigint); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.receive_report(node_name text, report_message_id text, report_serial bigint) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
begin
  insert into inventory.report_received (message_id, node, serial) values (report_message_id, node_name, report_serial)
  on conflict (message_id) do nothing;
  if not found then return false; end if;
  delete from inventory.report_received where node = node_name and received_at < now() - interval '1 day';
  return true;
end $$;

ALTER FUNCTION inventory.receive_report(node_name text, report_message_id text, report_serial bigint) OWNER TO mesh_inventory;

--
-- Name: record_agent_version(text, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.record_agent_version(node_name text, version text) RETURNS boolean
    LANGUAGE plpgsql
    AS $_$
declare
  was text;
begin
  if version is null or version !~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$' then
    raise exception 'node % reported agent version %, which is not MAJOR.MINOR.PATCH', node_name, coalesce(version, 'null')
      using errcode = 'MSHV1', hint = 'the mesh-host sends the version package.json names; a hand-built agent must too';
  end if;
  select n.agent_version into was from inventory.node n where n.name = node_name;
  if not found or was is not distinct from version then
    return false;
  end if;
  update inventory.node set agent_version = version, agent_version_at = now() where name = node_name;
  return was is not null;
end $_$;

ALTER FUNCTION inventory.record_agent_version(node_name text, version text) OWNER TO mesh_inventory;

--
-- Name: record_corrections(text, text[]); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.record_corrections(node_name text, resources text[]) RETURNS integer
    LANGUAGE sql
    AS $$
  with pruned as (
    delete from inventory.correction c
     where c.node = node_name and c.corrected_at < now() - (select kept_for from inventory.drift_setting)),
  added as (
    insert into inventory.correction (node, resource)
    select node_name, r from unnest(resources) r
     where exists (select 1 from inventory.node n where n.name = node_name and n.enrolled_at is not null)
    returning 1)
  select count(*)::int from added
$$;

ALTER FUNCTION inventory.record_corrections(node_name text, resources text[]) OWNER TO mesh_inventory;

--
-- Name: record_failure(text, bigint, jsonb); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.record_failure(node_name text, failed_serial bigint, failed_now jsonb) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
begin
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null;
  if not found then return false; end if;
  insert into inventory.apply_failure (node, serial, failed) values (node_name, failed_serial, failed_now)
  on conflict (node) do update set serial = excluded.serial, failed = excluded.failed, reported_at = now()
    where excluded.serial >= inventory.apply_failure.serial;
  return true;
end $$;

ALTER FUNCTION inventory.record_failure(node_name text, failed_serial bigint, failed_now jsonb) OWNER TO mesh_inventory;

--
-- Name: record_packages(text, jsonb); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.record_packages(node_name text, change jsonb) RETURNS text
    LANGUAGE plpgsql
    AS $$
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

ALTER FUNCTION inventory.record_packages(node_name text, change jsonb) OWNER TO mesh_inventory;

--
-- Name: record_refusal(text, bigint, text, text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.record_refusal(node_name text, refused_serial bigint, refusal_fault text, refusal_reason text) RETURNS integer
    LANGUAGE plpgsql
    AS $$
declare
  said_fault text := refusal_fault;
  said_reason text := refusal_reason;
  n integer;
  began timestamptz;
begin
  -- An agent from before replayed was a kind of its own: its replays said as forged.
  if said_fault = 'forged' and said_reason like 'replayed: %' then
    said_fault := 'replayed';
    said_reason := substr(said_reason, length('replayed: ') + 1);
  end if;
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null;
  if not found then return 0; end if;
  insert into inventory.refusal_said as s (node, fault) values (node_name, said_fault)
  on conflict (node, fault) do update
     set times = case when s.since > now() - (select fold_refusals from inventory.bounds_setting) then s.times + 1 else 1 end,
         since = case when s.since > now() - (select fold_refusals from inventory.bounds_setting) then s.since else now() end
  returning s.times, s.since into n, began;
  insert into inventory.refusal as x (node, serial, fault, reason, times, first_at)
  values (node_name, refused_serial, said_fault, said_reason, n, began)
  on conflict (node) do update
     set times      = excluded.times,
         first_at   = excluded.first_at,
         serial     = excluded.serial,
         fault      = excluded.fault,
         reason     = excluded.reason,
         refused_at = now();
  return n;
end $$;

ALTER FUNCTION inventory.record_refusal(node_name text, refused_serial bigint, refusal_fault text, refusal_reason text) OWNER TO mesh_inventory;

--
-- Name: record_report(text, bigint, jsonb, jsonb, timestamp with time zone); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.record_report(node_name text, report_serial bigint, held_now jsonb, failed_now jsonb, holds_until_now timestamp with time zone DEFAULT NULL::timestamp with time zone) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null;
  if not found then
    raise exception 'no enrolled node %', node_name using errcode = 'MSH04';
  end if;
  -- A report resent after a lost link may arrive after a newer one: never go back.
  insert into inventory.report (node, serial, held, failed, holds_until) values (node_name, report_serial, held_now, failed_now, holds_until_now)
  on conflict (node) do update set serial = excluded.serial, held = excluded.held, failed = excluded.failed, holds_until = excluded.holds_until, reported_at = now()
    where excluded.serial >= inventory.report.serial;
end $$;

ALTER FUNCTION inventory.record_report(node_name text, report_serial bigint, held_now jsonb, failed_now jsonb, holds_until_now timestamp with time zone) OWNER TO mesh_inventory;

--
-- Name: record_reports(text[]); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.record_reports(entries text[]) RETURNS TABLE(ordinal integer, first_delivery boolean, times integer, upgraded boolean, resync boolean, error_code text, error_message text)
    LANGUAGE plpgsql
    AS $$
declare
  e jsonb;
  node_name text;
  i integer;
begin
  for i in 1 .. coalesce(array_length(entries, 1), 0) loop
    ordinal := i;
    first_delivery := true; times := 0; upgraded := false; resync := false; error_code := null; error_message := null;
    begin
      e := entries[i]::jsonb;
      node_name := e->>'node';
      -- Once per message: "seen" commits with what the report records, so a redelivery records nothing twice.
      if e->>'message_id' is not null then
        -- The receipt names the refused declaration's serial, else the report's.
        first_delivery := inventory.receive_report(node_name, e->>'message_id',
          case when jsonb_typeof(e->'refused') = 'object' then (e->'refused'->>'serial')::bigint else (e->>'serial')::bigint end);
      end if;
      if not first_delivery then
        perform inventory.mark_heard(node_name);
      else
        -- Every report's, a refusal's and a failure's too: the version of an agent that refuses is the one most worth knowing.
        if e->>'agent' is not null then
          upgraded := inventory.record_agent_version(node_name, e->>'agent');
        end if;
        if jsonb_typeof(e->'refused') = 'object' then
          times := inventory.record_refusal(node_name, (e->'refused'->>'serial')::bigint,
                                            e->'refused'->>'fault', e->'refused'->>'reason');
        else
          if jsonb_typeof(e->'packages') = 'object' then
            resync := inventory.record_packages(node_name, e->'packages') = 'resync';
          end if;
          -- Nothing for a report without corrections: the report path is the busiest write.
          if jsonb_array_length(e->'corrected') > 0 then
            perform inventory.record_corrections(node_name, array(select jsonb_array_elements_text(e->'corrected')));
          end if;
          if jsonb_array_length(e->'failed') > 0 then
            perform inventory.record_failure(node_name, (e->>'serial')::bigint, e->'failed');
          else
            perform inventory.record_report(node_name, (e->>'serial')::bigint, e->'held', '[]'::jsonb,
                                            to_timestamp((e->>'holds_until')::double precision));
          end if;
        end if;
      end if;
    exception when others then
      get stacked diagnostics error_code = returned_sqlstate, error_message = message_text;
      first_delivery := null; times := null; upgraded := null; resync := null;
    end;
    return next;
  end loop;
end $$;

ALTER FUNCTION inventory.record_reports(entries text[]) OWNER TO mesh_inventory;

--
-- Name: FUNCTION record_reports(entries text[]); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.record_reports(entries text[]) IS 'Records each report entry (JSON text) in a subtransaction of its own: a row per entry, in order, with its SQLSTATE and message where the store refused it and nothing of it was kept.';

--
-- Name: remove_broker(text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.remove_broker(address text) RETURNS void
    LANGUAGE plpgsql
    AS $$
begin
  perform 1 from inventory.broker for update;
  if not exists (select 1 from inventory.broker b where b.address = remove_broker.address) then
    raise exception 'the mesh knows no broker %', coalesce(quote_literal(address), 'null') using errcode = 'MSH14',
      hint = 'see mesh broker list for the addresses it knows';
  end if;
  if (select count(*) from inventory.broker) = 1 then
    raise exception 'broker % is the last broker of the mesh', address using errcode = 'MSH12',
      hint = 'add the broker that replaces it first (mesh broker add HOST:PORT --fingerprint FP), then remove this one';
  end if;
  delete from inventory.broker b where b.address = remove_broker.address;
end $$;

ALTER FUNCTION inventory.remove_broker(address text) OWNER TO mesh_inventory;

--
-- Name: FUNCTION remove_broker(address text); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.remove_broker(address text) IS 'Forget a broker. Refuses one the mesh does not know (MSH14) and the last one (MSH12).';

--
-- Name: retire_node(text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.retire_node(node_name text) RETURNS boolean
    LANGUAGE sql
    AS $$
  delete from inventory.node where name = node_name returning true
$$;

ALTER FUNCTION inventory.retire_node(node_name text) OWNER TO mesh_inventory;

--
-- Name: set_agent_skew(integer); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.set_agent_skew(minors integer) RETURNS integer
    LANGUAGE plpgsql
    AS $$
begin
  if minors is null or minors < 0 or minors > 100 then
    raise exception 'the skew rule cannot reach % minors back', coalesce(minors::text, 'null')
      using errcode = 'MSHV2', hint = 'give 0 (the current minor only) to 100; 1 speaks with the current minor and the one before';
  end if;
  update inventory.agent_skew set minors_behind = minors;
  return minors;
end $$;

ALTER FUNCTION inventory.set_agent_skew(minors integer) OWNER TO mesh_inventory;

--
-- Name: set_answer_every(interval); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.set_answer_every(every interval) RETURNS interval
    LANGUAGE sql
    AS $$
  update inventory.bounds_setting set answer_every = every returning answer_every
$$;

ALTER FUNCTION inventory.set_answer_every(every interval) OWNER TO mesh_inventory;

--
-- Name: set_aside(text, text, text, text, integer, bytea); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.set_aside(node_name text, message_kind text, sent_id text, why text, tried integer, message bytea) RETURNS bigint
    LANGUAGE plpgsql
    AS $$
declare
  n bigint;
begin
  insert into inventory.dead_letter (node, kind, message_id, reason, tries, body)
  values (node_name, message_kind, sent_id, why, tried, message) returning id into n;
  delete from inventory.dead_letter d
   where d.node = node_name
     and d.id < (select min(k.id) from (select id from inventory.dead_letter where node = node_name
                                          order by id desc limit (select letters_kept from inventory.bounds_setting)) k);
  return n;
end $$;

ALTER FUNCTION inventory.set_aside(node_name text, message_kind text, sent_id text, why text, tried integer, message bytea) OWNER TO mesh_inventory;

--
-- Name: set_fighting_after(integer); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.set_fighting_after(times integer) RETURNS integer
    LANGUAGE sql
    AS $$
  update inventory.drift_setting set fighting_after = times returning fighting_after
$$;

ALTER FUNCTION inventory.set_fighting_after(times integer) OWNER TO mesh_inventory;

--
-- Name: set_overlay_key(text, bytea, bytea); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.set_overlay_key(node_name text, left_key bytea, taken_key bytea) RETURNS text
    LANGUAGE plpgsql
    AS $$
declare now_key bytea; other text;
begin
  if octet_length(taken_key) <> 32 or octet_length(left_key) <> 32 then
    raise exception 'an overlay key is 32 bytes' using errcode = 'MSH05',
      hint = 'send the raw 32-byte X25519 public key';
  end if;
  select n.name into other from inventory.node n where n.overlay_key = taken_key and n.name <> node_name;
  if other is not null then
    raise exception 'node % already holds the overlay key node % wants to take', other, node_name using errcode = 'MSH06',
      hint = 'two nodes with one key would fight over every peer entry: give the tunnel its own key';
  end if;
  update inventory.node n set overlay_key = taken_key, overlay_key_at = now(), last_seen = now()
   where n.name = node_name and n.enrolled_at is not null and n.overlay_key = left_key
  returning n.overlay_key into now_key;
  if found then return 'rekeyed'; end if;
  select n.overlay_key into now_key from inventory.node n where n.name = node_name and n.enrolled_at is not null;
  if not found then
    raise exception 'no enrolled node %', node_name using errcode = 'MSH04';
  end if;
  if now_key = taken_key then return 'again'; end if;
  raise exception 'node % left an overlay key the mesh does not hold for it', node_name using errcode = 'MSH07',
    hint = 'the rekey is stale (a later one was recorded) or the node''s key file was changed by hand: run mesh-host overlay take again';
end $$;

ALTER FUNCTION inventory.set_overlay_key(node_name text, left_key bytea, taken_key bytea) OWNER TO mesh_inventory;

--
-- Name: set_wedged_after(integer); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.set_wedged_after(seconds integer) RETURNS integer
    LANGUAGE sql
    AS $$
  update inventory.wedge_setting set after_seconds = seconds returning after_seconds
$$;

ALTER FUNCTION inventory.set_wedged_after(seconds integer) OWNER TO mesh_inventory;

--
-- Name: spend_console_token(bytea, bytea, interval); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.spend_console_token(token_hash bytea, session_hash bytea, session_ttl interval) RETURNS timestamp with time zone
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare spent bytea; expires timestamptz := now() + session_ttl;
begin
  update inventory.console_token k set spent_at = now()
   where k.token_hash = spend_console_token.token_hash and k.spent_at is null and k.expires_at > now()
  returning k.token_hash into spent;
  if spent is null then
    raise exception 'that sign-in link is unknown, spent or expired' using errcode = 'MSH09',
      hint = 'a link signs in once: run mesh console token for a new one';
  end if;
  insert into inventory.console_session (session_hash, expires_at) values (spend_console_token.session_hash, expires);
  return expires;
end $$;

ALTER FUNCTION inventory.spend_console_token(token_hash bytea, session_hash bytea, session_ttl interval) OWNER TO mesh_inventory;

--
-- Name: FUNCTION spend_console_token(token_hash bytea, session_hash bytea, session_ttl interval); Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON FUNCTION inventory.spend_console_token(token_hash bytea, session_hash bytea, session_ttl interval) IS 'Sign in: spends a console link once and opens a session; the console''s reader calls it and may write nothing else.';

--
-- Name: spend_token(bytea, text, bytea, bytea, bytea); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.spend_token(token_hash bytea, node_name text, identity_key bytea, overlay_key bytea, sealing_key bytea) RETURNS text
    LANGUAGE plpgsql
    AS $$
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

ALTER FUNCTION inventory.spend_token(token_hash bytea, node_name text, identity_key bytea, overlay_key bytea, sealing_key bytea) OWNER TO mesh_inventory;

--
-- Name: state_control_version(text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.state_control_version(version text) RETURNS text
    LANGUAGE plpgsql
    AS $_$
begin
  if version is null or version !~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$' then
    raise exception 'the control plane''s version % is not MAJOR.MINOR.PATCH', coalesce(version, 'null')
      using errcode = 'MSHV0', hint = 'state the version package.json names, as mesh serve does';
  end if;
  update inventory.agent_skew set control_version = version, stated_at = now();
  return version;
end $_$;

ALTER FUNCTION inventory.state_control_version(version text) OWNER TO mesh_inventory;

--
-- Name: take_chunks(text, text, integer, integer); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.take_chunks(node_name text, package_sha256 text, first_chunk integer, last_chunk integer) RETURNS integer[]
    LANGUAGE plpgsql
    AS $$
declare
  every interval := (select answer_every from inventory.bounds_setting);
  taken integer[];
begin
  delete from inventory.chunk_handed h where h.node = node_name and h.handed_at <= now() - every;
  with put as (
    insert into inventory.chunk_handed (node, sha256, n)
    select node_name, package_sha256, g.n from generate_series(first_chunk, last_chunk) g(n)
    on conflict (node, sha256, n) do nothing
    returning n)
  select coalesce(array_agg(put.n order by put.n), '{}') into taken from put;
  if cardinality(taken) = 0 then
    raise exception '% asked again for chunks % to % of package %, every one handed to it within %', node_name,
      first_chunk, last_chunk, left(package_sha256, 12), every
      using errcode = 'MSHZ9', hint = 'nothing was read or sent again; the chunks handed before stand, and the host asks again after the interval by itself';
  end if;
  return taken;
end $$;

ALTER FUNCTION inventory.take_chunks(node_name text, package_sha256 text, first_chunk integer, last_chunk integer) OWNER TO mesh_inventory;

--
-- Name: version_parts(text); Type: FUNCTION; Schema: inventory; Owner: mesh_inventory
--

CREATE FUNCTION inventory.version_parts(version text) RETURNS integer[]
    LANGUAGE sql IMMUTABLE STRICT
    AS $$
  select string_to_array(split_part(version, '-', 1), '.')::integer[]
$$;

ALTER FUNCTION inventory.version_parts(version text) OWNER TO mesh_inventory;

--
-- Name: allocate_addresses(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".allocate_addresses(node_names text[] DEFAULT NULL::text[]) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  net cidr;
  n record;
  made integer := 0;
begin
  if node_names is not null then
    if not exists (select 1 from inventory.enrolled_node e
                    where e.name = any(node_names) and not exists (select 1 from overlay.address a where a.node = e.name)) then
      return 0;
    end if;
  elsif not exists (select 1 from inventory.enrolled_node e where not exists (select 1 from overlay.address a where a.node = e.name))
     and not exists (select 1 from overlay.address a where not exists (select 1 from inventory.enrolled_node e where e.name = a.node)) then
    return 0;
  end if;
  lock table overlay.address in share row exclusive mode;
  if node_names is null then
    delete from overlay.address a where not exists (select 1 from inventory.enrolled_node e where e.name = a.node);
  end if;
  select s.network into net from overlay.settings s;
  -- One statement for every node waiting, lowest free addresses first: a
  -- loop that searched the range once per node was quadratic, minutes for
  -- the first declaration of ten thousand nodes.
  with want as (
    select e.name, row_number() over (order by e.enrolled_at, e.name) as rn
      from inventory.enrolled_node e
     where (node_names is null or e.name = any(node_names))
       and not exists (select 1 from overlay.address a where a.node = e.name)),
  free as (
    select set_masklen(net::inet, 32) + g as c, row_number() over (order by g) as rn
      from generate_series(1::bigint, (2::bigint ^ (32 - masklen(net)))::bigint - 2) g
     where not exists (select 1 from overlay.address a where a.address = set_masklen(net::inet, 32) + g)
     order by g
     limit (select count(*) from want))
  insert into overlay.address (node, address)
  select w.name, f.c from want w join free f on f.rn = w.rn;
  get diagnostics made = row_count;
  select e.name into n from inventory.enrolled_node e
   where (node_names is null or e.name = any(node_names))
     and not exists (select 1 from overlay.address a where a.node = e.name) limit 1;
  if found then
    raise exception 'the overlay range % has no free address for node %', net, n.name using errcode = 'MSH60',
      hint = 'retire nodes that are gone (mesh node retire NAME), or widen overlay.settings.network';
  end if;
  return made;
end $$;

ALTER FUNCTION "overlay".allocate_addresses(node_names text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION allocate_addresses(node_names text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".allocate_addresses(node_names text[]) IS 'Addresses for the enrolled nodes of NODE_NAMES (null: all) that have none, lowest free first; null also releases the addresses of nodes no longer enrolled. Refuses (MSH60) when the range is full.';

--
-- Name: broker_ports(); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".broker_ports() RETURNS TABLE(epmd_port integer, dist_port integer)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select epmd_port, dist_port from overlay.firewall_setting
$$;

ALTER FUNCTION "overlay".broker_ports() OWNER TO mesh_overlay;

--
-- Name: FUNCTION broker_ports(); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".broker_ports() IS 'The broker cluster''s epmd and distribution ports, for the firewall (assignment 0021).';

--
-- Name: check_hub_capacity(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".check_hub_capacity(node_names text[] DEFAULT NULL::text[]) RETURNS integer
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare
  hubs bigint; spokes bigint; cap integer; need bigint;
begin
  select count(*) into hubs from overlay.member m where m.name in (select node from overlay.hub) and m.hub;
  if hubs = 0 or (node_names is not null and not exists (select 1 from overlay.hub h where h.node = any(node_names))) then
    return greatest(1, hubs)::integer;
  end if;
  select count(*) - hubs into spokes from inventory.enrolled_node e join overlay.address a on a.node = e.name;
  select hub_spokes into cap from overlay.settings;
  need := ceil(spokes::numeric / cap);
  if need > hubs then
    raise exception '% spokes need at least % hubs of at most % spokes each, and the overlay has %', spokes, need, cap, hubs
      using errcode = 'MSHT1',
      hint = format('name %s more dialable nodes hubs (mesh overlay hub NODE); each hub''s declaration would otherwise pass the size limit', need - hubs);
  end if;
  return hubs::integer;
end $$;

ALTER FUNCTION "overlay".check_hub_capacity(node_names text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION check_hub_capacity(node_names text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".check_hub_capacity(node_names text[]) IS 'The number of hub groups, one a hub (O4); refuses (MSHT1) when the spokes need more hubs than there are and a hub is among NODE_NAMES (null: all).';

--
-- Name: check_members(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".check_members(names text[]) RETURNS text[]
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
declare missing text;
begin
  if names is null or cardinality(names) = 0 then
    raise exception 'no node named' using errcode = 'MSHY0', hint = 'name at least one node, e.g. --down hub1';
  end if;
  select string_agg(x, ', ' order by x) into missing
    from unnest(names) x where not exists (select 1 from overlay.member m where m.name = x);
  if missing is not null then
    raise exception 'not in the overlay: %', missing using errcode = 'MSHY1',
      hint = 'name nodes the overlay holds (mesh overlay show): a node joins it once enrolled and given an address by mesh declare';
  end if;
  return names;
end $$;

ALTER FUNCTION "overlay".check_members(names text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION check_members(names text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".check_members(names text[]) IS 'NAMES, when each is an overlay member; refuses none named (MSHY0) and names the overlay does not hold (MSHY1).';

--
-- Name: count_lost_paths(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".count_lost_paths(down text[]) RETURNS bigint
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  with s as materialized (select x.*, r.dialable from overlay.strand_spokes(down) x join overlay.route_members(down) r on r.node = x.node),
       t as (select count(*) as n from s),
       -- Per site: the stranded spokes there, and how many of those can be dialled.
       g as (select s.site, count(*) as n, count(*) filter (where s.dialable) as d from s group by s.site)
  select coalesce(sum(2 * s.lost - (t.n - 1 - case when s.dialable then g.n - 1 else g.d end)), 0)::bigint
    from s
    join g on g.site = s.site
    cross join t
$$;

ALTER FUNCTION "overlay".count_lost_paths(down text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION count_lost_paths(down text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".count_lost_paths(down text[]) IS 'How many ordered pairs of members not in DOWN lose every path when DOWN fails: as many rows as overlay.lose_paths gives with no limit, counted without making them (Q2).';

--
-- Name: firewall_members(); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".firewall_members() RETURNS TABLE(node text, site text, address text, interface text, listen_port integer, dialled_by text[], ssh_port integer)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  select * from overlay.firewall_members(true)
$$;

ALTER FUNCTION "overlay".firewall_members() OWNER TO mesh_overlay;

--
-- Name: firewall_members(boolean); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".firewall_members(with_dialled_by boolean) RETURNS TABLE(node text, site text, address text, interface text, listen_port integer, dialled_by text[], ssh_port integer)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  select * from overlay.firewall_members_of(null, with_dialled_by)
$$;

ALTER FUNCTION "overlay".firewall_members(with_dialled_by boolean) OWNER TO mesh_overlay;

--
-- Name: FUNCTION firewall_members(with_dialled_by boolean); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".firewall_members(with_dialled_by boolean) IS 'Each overlay member for the firewall: address, interface, WireGuard port when dialable, the ssh port, and (only when asked: it computes the peer graph) the peers that dial it.';

--
-- Name: firewall_members_of(text[], boolean); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".firewall_members_of(node_names text[], with_dialled_by boolean) RETURNS TABLE(node text, site text, address text, interface text, listen_port integer, dialled_by text[], ssh_port integer)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  with s as (select listen_port, interface from overlay.settings),
       f as (select ssh_port from overlay.firewall_setting),
       d as (select p.peer, array_agg(p.node order by p.node) as dialled_by from overlay.peers() p where with_dialled_by group by p.peer),
       m as (select * from overlay.member m where node_names is null
             union all select * from overlay.member m where m.name in (select unnest(node_names)))
  select m.name, m.site, host(m.address) || '/32', s.interface,
         case when m.dialable is not null then s.listen_port end,
         case when with_dialled_by then coalesce(d.dialled_by, '{}') end,
         f.ssh_port
    from m cross join s cross join f left join d on d.peer = m.name
$$;

ALTER FUNCTION "overlay".firewall_members_of(node_names text[], with_dialled_by boolean) OWNER TO mesh_overlay;

--
-- Name: FUNCTION firewall_members_of(node_names text[], with_dialled_by boolean); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".firewall_members_of(node_names text[], with_dialled_by boolean) IS 'overlay.firewall_members for the nodes named (null: every member).';

--
-- Name: interface_texts_of(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".interface_texts_of(node_names text[]) RETURNS TABLE(node text, id text, resource text)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  with s as (select network, listen_port, interface from overlay.settings),
       -- Each node's peer list first, one row a node, then its member row (0008 joined the member to
       -- every peer row and grouped 59,398 wide rows on seven keys to make 10,000 lists).
       l as (select p.node, string_agg(overlay.peer_text(p.public_key, p.endpoint, p.allowed_ips, p.keepalive), ', ' order by p.public_key) as peers
               from overlay.peers_of(node_names) p group by p.node)
  select m.name, 'wireguard:' || s.interface,
         case when s.interface is null or m.address is null or s.network is null or m.hub is null
           -- Never in a mesh (settings and addresses are not null): built and stripped as in 0008.
           then jsonb_strip_nulls(jsonb_build_object(
             'id', 'wireguard:' || s.interface, 'kind', 'wireguard', 'name', s.interface,
             'address', host(m.address) || '/' || masklen(s.network),
             'listenPort', case when m.dialable is not null then s.listen_port end,
             'hub', m.hub, 'peers', ('[' || l.peers || ']')::jsonb))::text
           else '{"id": ' || to_json('wireguard:' || s.interface)::text
             || ', "hub": ' || m.hub::text
             || ', "kind": "wireguard", "name": ' || to_json(s.interface)::text
             || ', "peers": [' || l.peers || ']'
             || ', "address": ' || to_json(host(m.address) || '/' || masklen(s.network))::text
             || coalesce(case when m.dialable is not null then ', "listenPort": ' || s.listen_port::text end, '')
             || '}'
         end
    from l
    join overlay.member m on m.name = l.node
    cross join s
$$;

ALTER FUNCTION "overlay".interface_texts_of(node_names text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION interface_texts_of(node_names text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".interface_texts_of(node_names text[]) IS 'Each named node''s WireGuard interface (null: every node) as jsonb text, with its resource id: what compose_each reads (assignment 0025).';

--
-- Name: interfaces(); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".interfaces() RETURNS TABLE(node text, resource jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  select * from overlay.interfaces_of(null)
$$;

ALTER FUNCTION "overlay".interfaces() OWNER TO mesh_overlay;

--
-- Name: interfaces_of(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".interfaces_of(node_names text[]) RETURNS TABLE(node text, resource jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  select node, resource::jsonb from overlay.interface_texts_of(node_names)
$$;

ALTER FUNCTION "overlay".interfaces_of(node_names text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION interfaces_of(node_names text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".interfaces_of(node_names text[]) IS 'overlay.interfaces for the nodes named (null: all).';

--
-- Name: long_peer_lists(); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".long_peer_lists() RETURNS TABLE(node text, peers bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  -- From the enrolled nodes, not overlay.member: the weight needs no address, and the join to
  -- every address cost more than the split saves.
  with e as materialized (select name, site, dialable is not null as dialable from inventory.enrolled_node),
       h as (select h.node from overlay.hub h join e on e.name = h.node and e.dialable),
       n as (select (select count(*) from e) as members, (select count(*) from h) as hubs),
       s as (select site, count(*) as members from e group by site)
  select e.name, case when e.name in (select node from h) then n.members / greatest(n.hubs, 1) else s.members end
    from e cross join n join s on s.site is not distinct from e.site
   where e.dialable
$$;

ALTER FUNCTION "overlay".long_peer_lists() OWNER TO mesh_overlay;

--
-- Name: FUNCTION long_peer_lists(); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".long_peer_lists() IS 'Hubs and dialable nodes with about how many peers each holds (a hub its group, a dialable node its site): the weight a composition in parts is split by.';

--
-- Name: lose_paths(text[], integer); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".lose_paths(down text[], max_pairs integer DEFAULT NULL::integer) RETURNS TABLE(node text, peer text, hub text, carried_by text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  with r as materialized (select r.*, coalesce(r.route_now = any(coalesce(down, '{}')), false) as stranded
                            from overlay.route_members(down) r)
  select a.node, b.node,
         case when a.stranded then a.route_now else b.route_now end,
         case when a.stranded then a.route_after else b.route_after end
    from (select * from r order by r.node) a
    cross join lateral (
      select * from r b
       where b.node <> a.node and (a.stranded or b.stranded)
         and not overlay.peered(a.node, a.hub, a.route_now, a.site, a.dialable, b.node, b.hub, b.route_now, b.site, b.dialable)
       order by b.node) b
   limit max_pairs
$$;

ALTER FUNCTION "overlay".lose_paths(down text[], max_pairs integer) OWNER TO mesh_overlay;

--
-- Name: FUNCTION lose_paths(down text[], max_pairs integer); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".lose_paths(down text[], max_pairs integer) IS 'Ordered pairs of members not in DOWN that lose every path when DOWN fails (one end or both stranded, not peers), in order, at most MAX_PAIRS (null: all): the hub lost and the hub that would carry that end once the graph is computed again (null: none) (Q2).';

--
-- Name: member_groups(); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".member_groups() RETURNS TABLE(name text, grp integer, groups integer, block text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  select * from overlay.member_groups_without(null)
$$;

ALTER FUNCTION "overlay".member_groups() OWNER TO mesh_overlay;

--
-- Name: FUNCTION member_groups(); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".member_groups() IS 'Each overlay member''s hub group (O4), how many groups there are, and its address''s /20 block.';

--
-- Name: member_groups_without(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".member_groups_without(down text[]) RETURNS TABLE(name text, grp integer, groups integer, block text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  select name, grp, groups, block from overlay.members_grouped(null, down)
$$;

ALTER FUNCTION "overlay".member_groups_without(down text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION member_groups_without(down text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".member_groups_without(down text[]) IS 'Each overlay member not in DOWN, its hub group as the graph would be computed without DOWN (O4), how many groups there would be, and its address''s /20 block.';

--
-- Name: members_grouped(text[], text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".members_grouped(node_names text[], down text[]) RETURNS TABLE(name text, site text, dialable text, public_key text, address inet, hub boolean, grp integer, groups integer, block text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  with s as (select network from overlay.settings),
       h as materialized (
         select x.name, (row_number() over (order by x.name) - 1)::integer as grp
           from overlay.member x
          where x.name in (select node from overlay.hub) and x.hub and not (x.name = any(coalesce(down, '{}')))),
       g as (select greatest(1, count(*))::integer as groups from h),
       -- Two branches, not one with an OR: the OR kept the planner from looking names up.
       m as materialized (
         select * from (select * from overlay.member x where node_names is null
                        union all select * from overlay.member x where x.name in (select unnest(node_names))) x
          where not (x.name = any(coalesce(down, '{}'))))
  select m.name, m.site, m.dialable, m.public_key, m.address, m.hub,
         case when m.hub then hh.grp
           else (((m.address - set_masklen(s.network::inet, 32)) >> 12) % g.groups)::integer
         end,
         g.groups,
         host(network(set_masklen(m.address, 20))) || '/20'
    from m cross join s cross join g left join h hh on hh.name = m.name
$$;

ALTER FUNCTION "overlay".members_grouped(node_names text[], down text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION members_grouped(node_names text[], down text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".members_grouped(node_names text[], down text[]) IS 'Each overlay member named (null: every member) not in DOWN, with its hub group as the graph would be computed without DOWN (O4), how many groups there would be, and its address''s /20 block.';

--
-- Name: node_resources_of(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".node_resources_of(node_names text[]) RETURNS TABLE(node text, resource jsonb)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 100
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  select * from overlay.interfaces_of(node_names)
$$;

ALTER FUNCTION "overlay".node_resources_of(node_names text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION node_resources_of(node_names text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".node_resources_of(node_names text[]) IS 'overlay.node_resources for the nodes named (null: all): what composing a part of the fleet reads.';

--
-- Name: peer_text(text, text, text[], integer); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".peer_text(public_key text, endpoint text, allowed_ips text[], keepalive integer) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE
    AS $$
  select case
    when public_key is null or allowed_ips is null
      then jsonb_strip_nulls(jsonb_build_object('publicKey', public_key, 'endpoint', endpoint, 'allowedIps', to_jsonb(allowed_ips), 'keepalive', keepalive))::text
    else '{' || coalesce('"endpoint": ' || to_json(endpoint)::text || ', ', '')
             || coalesce('"keepalive": ' || keepalive::text || ', ', '')
             || '"publicKey": ' || to_json(public_key)::text
             || ', "allowedIps": ' || to_jsonb(allowed_ips)::text || '}'
  end
$$;

ALTER FUNCTION "overlay".peer_text(public_key text, endpoint text, allowed_ips text[], keepalive integer) OWNER TO mesh_overlay;

--
-- Name: FUNCTION peer_text(public_key text, endpoint text, allowed_ips text[], keepalive integer); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".peer_text(public_key text, endpoint text, allowed_ips text[], keepalive integer) IS 'A WireGuard peer as a declaration carries it, as jsonb text: the keys that have a value, in jsonb''s order.';

--
-- Name: peered(boolean, text, boolean, boolean, text, boolean); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".peered(a_hub boolean, a_site text, a_dialable boolean, b_hub boolean, b_site text, b_dialable boolean) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select a_hub or b_hub or (a_site = b_site and (a_dialable or b_dialable))
$$;

ALTER FUNCTION "overlay".peered(a_hub boolean, a_site text, a_dialable boolean, b_hub boolean, b_site text, b_dialable boolean) OWNER TO mesh_overlay;

--
-- Name: FUNCTION peered(a_hub boolean, a_site text, a_dialable boolean, b_hub boolean, b_site text, b_dialable boolean); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".peered(a_hub boolean, a_site text, a_dialable boolean, b_hub boolean, b_site text, b_dialable boolean) IS 'The edge rule of a single hub (a hub a peer of every member), which is not the graph''s with two hubs or more; nothing reads it. The graph''s rule is overlay.peered(a, a_hub, a_route, a_site, a_dialable, b, ...) (O4).';

--
-- Name: peered(text, boolean, text, text, boolean, text, boolean, text, text, boolean); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".peered(a text, a_hub boolean, a_route text, a_site text, a_dialable boolean, b text, b_hub boolean, b_route text, b_site text, b_dialable boolean) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$
  select (a_hub and b_hub) or a_route is not distinct from b or b_route is not distinct from a
      or (not a_hub and not b_hub and a_site = b_site and (a_dialable or b_dialable))
$$;

ALTER FUNCTION "overlay".peered(a text, a_hub boolean, a_route text, a_site text, a_dialable boolean, b text, b_hub boolean, b_route text, b_site text, b_dialable boolean) OWNER TO mesh_overlay;

--
-- Name: FUNCTION peered(a text, a_hub boolean, a_route text, a_site text, a_dialable boolean, b text, b_hub boolean, b_route text, b_site text, b_dialable boolean); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".peered(a text, a_hub boolean, a_route text, a_site text, a_dialable boolean, b text, b_hub boolean, b_route text, b_site text, b_dialable boolean) IS 'True when two members are peers: two hubs, a spoke and its route hub, or two spokes of one site with one end dialable (O1, O4). Each end as overlay.route_members gives it.';

--
-- Name: peers(); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".peers() RETURNS TABLE(node text, peer text, public_key text, endpoint text, allowed_ips text[], keepalive integer, route boolean, reason text)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 200
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  select * from overlay.peers_of(null)
$$;

ALTER FUNCTION "overlay".peers() OWNER TO mesh_overlay;

--
-- Name: peers_of(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".peers_of(node_names text[]) RETURNS TABLE(node text, peer text, public_key text, endpoint text, allowed_ips text[], keepalive integer, route boolean, reason text)
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 200
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  with s as (select network, keepalive from overlay.settings),
       -- Who can be a peer of the nodes asked for (O1, O4). A spoke's peers are its group's hub,
       -- its site's dialable nodes, and, if it is dialable, its whole site: for a few spokes,
       -- those members alone are read (the pairs below are the same rule over fewer rows). For
       -- a hub, for many, or for all: every member.
       few as (select node_names is not null and cardinality(node_names) <= 1000
                      and not exists (select 1 from overlay.hub h where h.node = any(node_names)) as yes),
       asked as materialized (
         select e.name, e.site, e.dialable from inventory.enrolled_node e, few
          where few.yes and e.name in (select unnest(node_names))),
       -- The sites' dialable nodes through inventory's index of them; a whole site only for a
       -- dialable spoke asked for (rare: then its site is read).
       reach as (
         select name from asked
         union select h.node from overlay.hub h
         union select e.name from inventory.enrolled_node e
                where e.dialable is not null and e.site in (select site from asked)
         union select e.name from inventory.enrolled_node e
                where exists (select 1 from asked where dialable is not null)
                  and e.site in (select site from asked where dialable is not null)),
       m as materialized (select * from overlay.members_grouped(
                            case when (select yes from few) then array(select name from reach) end, null)),
       h as materialized (select * from m where hub),
       d as materialized (select * from m where dialable is not null and not hub),
       -- The nodes whose lists are wanted; a semi-join, not = any() (10,000 × 10,000 comparisons).
       w as materialized (select * from m where node_names is null or m.name in (select unnest(node_names))),
       blocks as (select x.grp, array_agg(distinct x.block order by x.block) as blocks from m x where not x.hub group by x.grp),
       pair as (
         select a.name as a, b.name as b from w a join h b on b.name <> a.name and (a.hub or b.grp = a.grp)
         union
         select a.name, b.name from w a join m b on a.hub and b.name <> a.name and (b.hub or b.grp = a.grp)
         union
         select a.name, b.name from w a join d b on not a.hub and b.site = a.site and b.name <> a.name
         union
         select a.name, b.name from w a join m b on not a.hub and not b.hub and a.dialable is not null and b.site = a.site and b.name <> a.name),
       route as (
         select a.name as node, h.name as hub from w a join h on h.grp = a.grp where not a.hub)
  select a.name, b.name, b.public_key, b.dialable,
         case when r.hub is not null then array[s.network::text]
              when a.hub and b.hub then array[host(b.address) || '/32'] || coalesce(bl.blocks, '{}')
              else array[host(b.address) || '/32'] end,
         case when a.dialable is null then s.keepalive end,
         r.hub is not null,
         case when a.hub or b.hub then 'hub' else 'site' end
    from pair p
    join m a on a.name = p.a
    join m b on b.name = p.b
    cross join s
    left join route r on r.node = p.a and r.hub = p.b
    left join blocks bl on a.hub and b.hub and bl.grp = b.grp
$$;

ALTER FUNCTION "overlay".peers_of(node_names text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION peers_of(node_names text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".peers_of(node_names text[]) IS 'overlay.peers for the nodes named (null: all): each one''s peer list exactly as in the whole graph.';

--
-- Name: route_members(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".route_members(down text[]) RETURNS TABLE(node text, site text, dialable boolean, hub boolean, route_now text, route_after text)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  with m as materialized (select * from overlay.member),
       gn as materialized (select * from overlay.member_groups()),
       ga as materialized (select * from overlay.member_groups_without(down)),
       -- Each group's hub, now and once computed again.
       hn as (select g.grp, g.name from gn g join m on m.name = g.name where m.hub),
       ha as (select g.grp, g.name from ga g join m on m.name = g.name where m.hub)
  select a.name, a.site, a.dialable is not null, a.hub, hn.name, ha.name
    from m a
    join gn on gn.name = a.name
    join ga on ga.name = a.name -- ga holds no node in DOWN
    left join hn on not a.hub and hn.grp = gn.grp
    left join ha on not a.hub and ha.grp = ga.grp
$$;

ALTER FUNCTION "overlay".route_members(down text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION route_members(down text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".route_members(down text[]) IS 'Each member not in DOWN: site, dialable, hub, its route hub now and the one it would have with the graph computed again without DOWN (null: no hub left). What what-if and why read of the graph (Q2).';

--
-- Name: set_address(text, inet); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".set_address(node_name text, wanted inet) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
declare net cidr; other text;
begin
  if not exists (select 1 from inventory.enrolled_node where name = node_name) then
    raise exception 'no enrolled node named %', node_name using errcode = 'MSH61', hint = 'see mesh node list';
  end if;
  select s.network into net from overlay.settings s;
  if not (wanted << net) or host(wanted) = host(net) or host(wanted) = host(broadcast(net)) then
    raise exception '% is not a host address in the overlay range %', host(wanted), net using errcode = 'MSH63',
      hint = 'choose an address inside the range, neither its first nor its last';
  end if;
  select a.node into other from overlay.address a where a.address = set_masklen(wanted, 32) and a.node <> node_name;
  if other is not null then
    raise exception 'the overlay address % is held by node %', host(wanted), other using errcode = 'MSH64',
      hint = 'an address is never shared: choose another, or retire the node that holds it';
  end if;
  insert into overlay.address (node, address) values (node_name, set_masklen(wanted, 32))
  on conflict (node) do update set address = excluded.address, allocated_at = now()
    where overlay.address.address is distinct from excluded.address;
  return found;
end $$;

ALTER FUNCTION "overlay".set_address(node_name text, wanted inet) OWNER TO mesh_overlay;

--
-- Name: set_broker_ports(integer, integer); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".set_broker_ports(epmd integer, dist integer) RETURNS TABLE(epmd_port integer, dist_port integer)
    LANGUAGE plpgsql
    AS $$
begin
  if epmd is null or dist is null or epmd not between 1 and 65535 or dist not between 1 and 65535 or epmd = dist then
    raise exception 'broker ports epmd % and distribution % are not two port numbers', epmd, dist using errcode = 'MSH66',
      hint = 'give two different ports from 1 to 65535 (install.sh --epmd-port, --dist-port)';
  end if;
  update overlay.firewall_setting f set epmd_port = epmd, dist_port = dist;
  return query select f.epmd_port, f.dist_port from overlay.firewall_setting f;
end $$;

ALTER FUNCTION "overlay".set_broker_ports(epmd integer, dist integer) OWNER TO mesh_overlay;

--
-- Name: FUNCTION set_broker_ports(epmd integer, dist integer); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".set_broker_ports(epmd integer, dist integer) IS 'Set the broker cluster''s epmd and distribution ports (X2). Refuses anything but two different ports from 1 to 65535 (MSH66).';

--
-- Name: set_hub(text, boolean); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".set_hub(node_name text, on_off boolean) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
declare n record;
begin
  select e.name, e.dialable into n from inventory.enrolled_node e where e.name = node_name;
  if not found then
    raise exception 'no enrolled node named %', node_name using errcode = 'MSH61', hint = 'see mesh node list';
  end if;
  if on_off then
    if n.dialable is null then
      raise exception 'node % cannot be a hub: nothing can dial it', node_name using errcode = 'MSH62',
        hint = format('a hub needs a dialable address: retire it and issue its token again with --dialable HOST:PORT (mesh token issue %s --dialable ...)', node_name);
    end if;
    insert into overlay.hub (node) values (node_name) on conflict do nothing;
  else
    delete from overlay.hub where node = node_name;
  end if;
  return found;
end $$;

ALTER FUNCTION "overlay".set_hub(node_name text, on_off boolean) OWNER TO mesh_overlay;

--
-- Name: set_ssh_port(integer); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".set_ssh_port(port integer) RETURNS integer
    LANGUAGE plpgsql
    AS $$
begin
  if port is null or port not between 1 and 65535 then
    raise exception 'ssh port % is not a port number', port using errcode = 'MSH65', hint = 'give a port from 1 to 65535';
  end if;
  update overlay.firewall_setting set ssh_port = port;
  return port;
end $$;

ALTER FUNCTION "overlay".set_ssh_port(port integer) OWNER TO mesh_overlay;

--
-- Name: ssh_port(); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".ssh_port() RETURNS integer
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
  select ssh_port from overlay.firewall_setting
$$;

ALTER FUNCTION "overlay".ssh_port() OWNER TO mesh_overlay;

--
-- Name: strand_spokes(text[]); Type: FUNCTION; Schema: overlay; Owner: mesh_overlay
--

CREATE FUNCTION "overlay".strand_spokes(down text[]) RETURNS TABLE(node text, site text, hub text, carried_by text, lost bigint)
    LANGUAGE sql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    SET jit TO 'off'
    AS $$
  with r as materialized (select * from overlay.route_members(down)),
       s as materialized (select * from r where r.route_now = any(coalesce(down, '{}'))),
       -- Per site: its spokes not down, and how many of those can be dialled.
       g as (select r.site, count(*) as n, count(*) filter (where r.dialable) as d from r where not r.hub group by r.site),
       t as (select count(*) as n from r)
  select s.node, s.site, s.route_now, s.route_after,
         t.n - 1 - case when s.dialable then g.n - 1 else g.d end
    from s
    join g on g.site = s.site
    cross join t
$$;

ALTER FUNCTION "overlay".strand_spokes(down text[]) OWNER TO mesh_overlay;

--
-- Name: FUNCTION strand_spokes(down text[]); Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON FUNCTION "overlay".strand_spokes(down text[]) IS 'The spokes whose route hub is in DOWN: the hub lost, the hub that would carry them once the graph is computed again (null: none), and how many members each stops reaching (Q2).';

--
-- Name: acknowledged_generation(text, text); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.acknowledged_generation(secret_name text, node_name text) RETURNS integer
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION provision.acknowledged_generation(secret_name text, node_name text) OWNER TO mesh_provision;

--
-- Name: affected_holders(text, text); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.affected_holders(provision_name text, consumer_module text) RETURNS TABLE(node text, sides text[], sealing_key text)
    LANGUAGE sql STABLE ROWS 4
    AS $$
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

ALTER FUNCTION provision.affected_holders(provision_name text, consumer_module text) OWNER TO mesh_provision;

--
-- Name: grant(text, text, jsonb); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision."grant"(provision_name text, consumer_module text, grant_facts jsonb) RETURNS text
    LANGUAGE plpgsql
    AS $_$
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
end $_$;

ALTER FUNCTION provision."grant"(provision_name text, consumer_module text, grant_facts jsonb) OWNER TO mesh_provision;

--
-- Name: offer(text, text, text, jsonb); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.offer(provision_name text, provision_kind text, provider_module text, provision_facts jsonb) RETURNS boolean
    LANGUAGE plpgsql
    AS $$
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

ALTER FUNCTION provision.offer(provision_name text, provision_kind text, provider_module text, provision_facts jsonb) OWNER TO mesh_provision;

--
-- Name: placements(); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.placements() RETURNS TABLE(module text, node text)
    LANGUAGE plpgsql STABLE ROWS 20
    AS $$
begin
  return query select p.module, p.node from assignment.placement p;
end $$;

ALTER FUNCTION provision.placements() OWNER TO mesh_provision;

--
-- Name: resolve_holders(text, text); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.resolve_holders(provision_name text, consumer_module text) RETURNS TABLE(node text, sides text[], sealing_key text, secret text)
    LANGUAGE plpgsql STABLE
    AS $$
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

ALTER FUNCTION provision.resolve_holders(provision_name text, consumer_module text) OWNER TO mesh_provision;

--
-- Name: revoke(text, text); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.revoke(provision_name text, consumer_module text) RETURNS boolean
    LANGUAGE sql
    AS $$
  delete from provision.grant where provision = provision_name and consumer = consumer_module returning true
$$;

ALTER FUNCTION provision.revoke(provision_name text, consumer_module text) OWNER TO mesh_provision;

--
-- Name: secret_of(text, text); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.secret_of(provision_name text, consumer_module text) RETURNS text
    LANGUAGE sql IMMUTABLE
    AS $$
  select 'provision/' || provision_name || '/' || consumer_module
$$;

ALTER FUNCTION provision.secret_of(provision_name text, consumer_module text) OWNER TO mesh_provision;

--
-- Name: set_files_root(text); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.set_files_root(root text) RETURNS text
    LANGUAGE sql
    AS $$
  update provision.setting set files_root = root returning files_root
$$;

ALTER FUNCTION provision.set_files_root(root text) OWNER TO mesh_provision;

--
-- Name: settled_by(text); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.settled_by(node_name text) RETURNS TABLE(secret text, settled integer)
    LANGUAGE sql STABLE
    AS $$
  select s.secret, s.settled
    from provision.settlement(array(select distinct e.secret from secret.held_earlier e
                                      join secret.held h on h.secret = e.secret and h.holder = node_name)) s
   where s.settled is not null
     and exists (select 1 from secret.held_earlier e where e.secret = s.secret and e.generation < s.settled)
$$;

ALTER FUNCTION provision.settled_by(node_name text) OWNER TO mesh_provision;

--
-- Name: settlement(text[]); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.settlement(secret_names text[]) RETURNS TABLE(provision text, consumer text, secret text, generation integer, holders text[], settled integer, waiting_for text[])
    LANGUAGE sql STABLE SECURITY DEFINER ROWS 10
    SET search_path TO 'pg_catalog', 'pg_temp'
    AS $$
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

ALTER FUNCTION provision.settlement(secret_names text[]) OWNER TO mesh_provision;

--
-- Name: where_is(text); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.where_is(node_name text) RETURNS text
    LANGUAGE plpgsql STABLE
    AS $_$
declare a text;
begin
  if to_regprocedure('overlay.address_of(text)') is not null then
    execute 'select overlay.address_of($1)' into a using node_name;
    if a is not null then return a; end if;
  end if;
  select coalesce(split_part(e.dialable, ':', 1), e.name) into a from inventory.enrolled_node e where e.name = node_name;
  return coalesce(a, node_name);
end $_$;

ALTER FUNCTION provision.where_is(node_name text) OWNER TO mesh_provision;

--
-- Name: withdraw(text); Type: FUNCTION; Schema: provision; Owner: mesh_provision
--

CREATE FUNCTION provision.withdraw(provision_name text) RETURNS boolean
    LANGUAGE sql
    AS $$
  delete from provision.provision where name = provision_name returning true
$$;

ALTER FUNCTION provision.withdraw(provision_name text) OWNER TO mesh_provision;

--
-- Name: check_holders(text[], text[]); Type: FUNCTION; Schema: secret; Owner: mesh_secret
--

CREATE FUNCTION secret.check_holders(holders text[], sealed_to text[]) RETURNS void
    LANGUAGE plpgsql STABLE
    AS $$
declare h text; k text; now_key bytea;
begin
  if coalesce(array_length(holders, 1), 0) = 0 then
    raise exception 'a secret needs at least one holder' using errcode = 'MSH44',
      hint = 'assign the modules that use it to a node first (mesh assign MODULE NODE)';
  end if;
  if array_length(holders, 1) <> coalesce(array_length(sealed_to, 1), 0) then
    raise exception 'holders and keys differ in number' using errcode = 'MSH45',
      hint = 'seal the value once per holder, to that holder''s key';
  end if;
  for h, k in select * from unnest(holders, sealed_to) loop
    select e.sealing_key into now_key from inventory.enrolled_node e where e.name = h;
    if now_key is null then
      raise exception 'node % cannot be resolved: it is not enrolled, so it has no sealing key', h using errcode = 'MSH41',
        hint = 'nothing was changed and the old secret keeps working; enrol the node again, or unassign it (see mesh node list)';
    end if;
    if now_key <> decode(k, 'hex') then
      raise exception 'node %''s sealing key changed while the secret was being sealed', h using errcode = 'MSH43',
        hint = 'nothing was changed; run the command again';
    end if;
  end loop;
end $$;

ALTER FUNCTION secret.check_holders(holders text[], sealed_to text[]) OWNER TO mesh_secret;

--
-- Name: forget(text); Type: FUNCTION; Schema: secret; Owner: mesh_secret
--

CREATE FUNCTION secret.forget(secret_name text) RETURNS boolean
    LANGUAGE sql
    AS $$
  delete from secret.secret where name = secret_name returning true
$$;

ALTER FUNCTION secret.forget(secret_name text) OWNER TO mesh_secret;

--
-- Name: forget_earlier(text, integer); Type: FUNCTION; Schema: secret; Owner: mesh_secret
--

CREATE FUNCTION secret.forget_earlier(secret_name text, below integer) RETURNS integer
    LANGUAGE sql
    AS $$
  with gone as (delete from secret.earlier where secret = secret_name and generation < below returning 1)
  select count(*)::int from gone
$$;

ALTER FUNCTION secret.forget_earlier(secret_name text, below integer) OWNER TO mesh_secret;

--
-- Name: put_accepted(text, text[], text[], text[], text, text); Type: FUNCTION; Schema: secret; Owner: mesh_secret
--

CREATE FUNCTION secret.put_accepted(secret_name text, holders text[], sealed_to text[], blobs text[], secret_path text, secret_mode text) RETURNS integer
    LANGUAGE plpgsql
    AS $$
declare s secret.secret; gen integer;
begin
  select * into s from secret.secret where name = secret_name for update;
  if found and s.origin = 'made' then
    raise exception 'secret % was made by the mesh; it cannot be replaced by an accepted value', secret_name
      using errcode = 'MSH42', hint = 'choose another name, or rotate it (mesh secret rotate)';
  end if;
  perform secret.check_holders(holders, sealed_to);
  insert into secret.secret as t (name, origin, path, mode) values (secret_name, 'accepted', secret_path, coalesce(secret_mode, '0600'))
  on conflict (name) do update set generation = t.generation + 1, sealed_at = now(), path = excluded.path, mode = excluded.mode
  returning t.generation into gen;
  delete from secret.sealed where secret = secret_name;
  insert into secret.sealed (secret, holder, sealed_to, blob, generation)
  select secret_name, h, decode(k, 'hex'), b, gen from unnest(holders, sealed_to, blobs) as u(h, k, b);
  return gen;
end $$;

ALTER FUNCTION secret.put_accepted(secret_name text, holders text[], sealed_to text[], blobs text[], secret_path text, secret_mode text) OWNER TO mesh_secret;

--
-- Name: put_made(text, text[], text[], text[], text); Type: FUNCTION; Schema: secret; Owner: mesh_secret
--

CREATE FUNCTION secret.put_made(secret_name text, holders text[], sealed_to text[], blobs text[], secret_path text DEFAULT NULL::text) RETURNS integer
    LANGUAGE plpgsql
    AS $$
declare s secret.secret; gen integer;
begin
  select * into s from secret.secret where name = secret_name for update;
  if found and s.origin = 'accepted' then
    raise exception 'secret % was accepted, not made: the mesh cannot make it again for a machine whose sealing key changed', secret_name
      using errcode = 'MSH40', hint = format('issue it again: mesh secret accept %s --from FILE (the value the other system knows)', secret_name);
  end if;
  perform secret.check_holders(holders, sealed_to);
  insert into secret.secret as t (name, origin, path) values (secret_name, 'made', secret_path)
  on conflict (name) do update set generation = t.generation + 1, sealed_at = now(), path = coalesce(excluded.path, t.path)
  returning t.generation into gen;
  insert into secret.earlier (secret, holder, generation, sealed_to, blob)
  select b.secret, b.holder, b.generation, b.sealed_to, b.blob
    from secret.sealed b join secret.secret t on t.name = b.secret
   where b.secret = secret_name and t.path is null
  on conflict do nothing;
  delete from secret.sealed where secret = secret_name;
  insert into secret.sealed (secret, holder, sealed_to, blob, generation)
  select secret_name, h, decode(k, 'hex'), b, gen from unnest(holders, sealed_to, blobs) as u(h, k, b);
  return gen;
end $$;

ALTER FUNCTION secret.put_made(secret_name text, holders text[], sealed_to text[], blobs text[], secret_path text) OWNER TO mesh_secret;

--
-- Name: declaration; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.declaration (
    node text NOT NULL,
    serial bigint NOT NULL,
    digest bytea NOT NULL,
    resources_hash bytea NOT NULL,
    envelope bytea NOT NULL,
    issued_at timestamp with time zone DEFAULT now() NOT NULL,
    acknowledged_at timestamp with time zone,
    superseded_at timestamp with time zone,
    signed_at timestamp with time zone DEFAULT assignment.signed_now(),
    expires_at timestamp with time zone DEFAULT assignment.expires_now(),
    CONSTRAINT declaration_digest_check CHECK ((octet_length(digest) = 32)),
    CONSTRAINT declaration_expires_after_signing CHECK ((expires_at > signed_at)),
    CONSTRAINT declaration_resources_hash_check CHECK ((octet_length(resources_hash) = 32))
);
ALTER TABLE ONLY assignment.declaration ALTER COLUMN envelope SET COMPRESSION lz4;

ALTER TABLE assignment.declaration OWNER TO mesh_assignment;

--
-- Name: TABLE declaration; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.declaration IS 'Every declaration issued, exactly as published (signed envelope), so a rebuilt node can be handed it again.';

--
-- Name: COLUMN declaration.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration.node IS 'Whom it was for.';

--
-- Name: COLUMN declaration.serial; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration.serial IS 'Only goes forward per node (D2).';

--
-- Name: COLUMN declaration.digest; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration.digest IS 'sha256 of the signed body bytes.';

--
-- Name: COLUMN declaration.resources_hash; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration.resources_hash IS 'sha256 of the composed resources: an unchanged composition need not be sent again.';

--
-- Name: COLUMN declaration.envelope; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration.envelope IS 'The published bytes: {v, body, sig}.';

--
-- Name: COLUMN declaration.issued_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration.issued_at IS 'When it was published.';

--
-- Name: COLUMN declaration.acknowledged_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration.acknowledged_at IS 'When the node reported it applied it.';

--
-- Name: COLUMN declaration.superseded_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration.superseded_at IS 'When the node reported it drained past it unapplied.';

--
-- Name: COLUMN declaration.signed_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration.signed_at IS 'When it was signed, as its body says (null: signed before declarations carried it).';

--
-- Name: COLUMN declaration.expires_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration.expires_at IS 'Until when it holds, as its body says: a host that still applies it later reports stale.';

--
-- Name: acknowledged_sealed; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.acknowledged_sealed AS
 SELECT d.node,
    d.serial,
    (r.value ->> 'sealed'::text) AS sealed
   FROM (( SELECT DISTINCT ON (x.node) x.node,
            x.serial,
            x.envelope
           FROM assignment.declaration x
          WHERE (x.acknowledged_at IS NOT NULL)
          ORDER BY x.node, x.serial DESC) d
     CROSS JOIN LATERAL jsonb_array_elements(((((convert_from(d.envelope, 'utf8'::name))::jsonb ->> 'body'::text))::jsonb -> 'resources'::text)) r(value))
  WHERE ((r.value ->> 'kind'::text) = 'secret'::text);

ALTER TABLE assignment.acknowledged_sealed OWNER TO mesh_assignment;

--
-- Name: VIEW acknowledged_sealed; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.acknowledged_sealed IS 'The sealed blobs in each node''s newest acknowledged declaration: what it holds, as the mesh signed it.';

--
-- Name: agent_feature; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.agent_feature (
    kind text NOT NULL,
    first_version text NOT NULL,
    CONSTRAINT agent_feature_first_version_check CHECK ((first_version ~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$'::text)),
    CONSTRAINT agent_feature_kind_check CHECK ((kind ~ '^[a-z][a-z0-9-]{0,19}$'::text))
);

ALTER TABLE assignment.agent_feature OWNER TO mesh_assignment;

--
-- Name: TABLE agent_feature; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.agent_feature IS 'Each resource kind, and the first mesh-host version that applies it: an older agent is declared nothing of that kind. A kind not listed goes to every agent.';

--
-- Name: COLUMN agent_feature.kind; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.agent_feature.kind IS 'A resource kind as a declaration names it (src/wire/resources.ts).';

--
-- Name: COLUMN agent_feature.first_version; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.agent_feature.first_version IS 'The first agent version that applies it.';

--
-- Name: agent_holds; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.agent_holds AS
 SELECT agent_holds_of.node,
    agent_holds_of.kind,
    agent_holds_of.agent_version,
    agent_holds_of.first_version
   FROM assignment.agent_holds_of(NULL::text[]) agent_holds_of(node, kind, agent_version, first_version);

ALTER TABLE assignment.agent_holds OWNER TO mesh_assignment;

--
-- Name: VIEW agent_holds; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.agent_holds IS 'Each node and resource kind its reported agent is too old to apply: its declarations carry nothing of that kind until it reports a version that does (V1).';

--
-- Name: agent_target; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.agent_target (
    node text NOT NULL,
    version text NOT NULL,
    set_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT agent_target_node_check CHECK (((node = ''::text) OR (node ~ '^[a-z][a-z0-9-]{0,62}$'::text)))
);

ALTER TABLE assignment.agent_target OWNER TO mesh_assignment;

--
-- Name: TABLE agent_target; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.agent_target IS 'Which mesh-host version nodes must run: the row with node '''' for every node, a row naming a node for that node alone (a pin). No row: nodes are declared no agent and run what they were installed with.';

--
-- Name: COLUMN agent_target.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.agent_target.node IS 'The node pinned, or '''' for the whole fleet.';

--
-- Name: COLUMN agent_target.version; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.agent_target.version IS 'A version of catalogue.agent_packages.';

--
-- Name: COLUMN agent_target.set_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.agent_target.set_at IS 'When it was said.';

--
-- Name: assignment; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.assignment (
    module text NOT NULL,
    node text NOT NULL,
    assigned_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE assignment.assignment OWNER TO mesh_assignment;

--
-- Name: TABLE assignment; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.assignment IS 'Module M runs on node N. Names are checked against catalogue and inventory when assigned.';

--
-- Name: COLUMN assignment.module; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.assignment.module IS 'A catalogue module name.';

--
-- Name: COLUMN assignment.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.assignment.node IS 'An inventory node name.';

--
-- Name: COLUMN assignment.assigned_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.assignment.assigned_at IS 'When it was assigned.';

--
-- Name: node_serial; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.node_serial (
    node text NOT NULL,
    serial bigint NOT NULL,
    CONSTRAINT node_serial_serial_check CHECK ((serial > 0))
);

ALTER TABLE assignment.node_serial OWNER TO mesh_assignment;

--
-- Name: TABLE node_serial; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.node_serial IS 'The last serial issued to each node. Allocating is an UPDATE of this row, so parallel declares for one node queue on its lock and serials stay unique and ordered (D2).';

--
-- Name: COLUMN node_serial.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.node_serial.node IS 'The node.';

--
-- Name: COLUMN node_serial.serial; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.node_serial.serial IS 'The highest serial issued to it.';

--
-- Name: node; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.node (
    name text NOT NULL,
    site text DEFAULT 'default'::text NOT NULL,
    dialable text,
    identity_key bytea,
    overlay_key bytea,
    sealing_key bytea,
    enrolled_at timestamp with time zone,
    last_seen timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    here_since timestamp with time zone,
    agent_version text,
    agent_version_at timestamp with time zone,
    overlay_key_at timestamp with time zone,
    CONSTRAINT node_agent_version_form CHECK ((agent_version ~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$'::text)),
    CONSTRAINT node_check CHECK ((((enrolled_at IS NULL) = (identity_key IS NULL)) AND ((identity_key IS NULL) = (overlay_key IS NULL)) AND ((overlay_key IS NULL) = (sealing_key IS NULL)))),
    CONSTRAINT node_dialable_check CHECK ((dialable ~ '^[A-Za-z0-9.-]{1,253}:[0-9]{1,5}$'::text)),
    CONSTRAINT node_identity_key_check CHECK ((octet_length(identity_key) = 32)),
    CONSTRAINT node_name_check CHECK ((name ~ '^[a-z][a-z0-9-]{0,62}$'::text)),
    CONSTRAINT node_overlay_key_check CHECK ((octet_length(overlay_key) = 32)),
    CONSTRAINT node_sealing_key_check CHECK ((octet_length(sealing_key) = 32)),
    CONSTRAINT node_site_check CHECK ((site ~ '^[a-z][a-z0-9-]{0,62}$'::text))
);

ALTER TABLE inventory.node OWNER TO mesh_inventory;

--
-- Name: TABLE node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.node IS 'A machine of the mesh, from the moment its token is issued.';

--
-- Name: COLUMN node.name; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.name IS 'Also its broker account (node.NAME) and queue: the pattern keeps permission patterns from widening.';

--
-- Name: COLUMN node.site; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.site IS 'Where it is; nodes at one site may reach each other directly.';

--
-- Name: COLUMN node.dialable; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.dialable IS 'host:port others can dial for its overlay, or null when it sits behind NAT.';

--
-- Name: COLUMN node.identity_key; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.identity_key IS 'Ed25519 public key: signs what the node says about itself (rekeys).';

--
-- Name: COLUMN node.overlay_key; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.overlay_key IS 'X25519 public key: its WireGuard key.';

--
-- Name: COLUMN node.sealing_key; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.sealing_key IS 'X25519 public key: secrets are sealed to it.';

--
-- Name: COLUMN node.enrolled_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.enrolled_at IS 'When its token was spent; null until then.';

--
-- Name: COLUMN node.last_seen; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.last_seen IS 'When anything was last heard from it: heard, report, refusal.';

--
-- Name: COLUMN node.created_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.created_at IS 'When its first token was issued.';

--
-- Name: COLUMN node.here_since; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.here_since IS 'When the node was last heard after 150 s of silence (or first): how long it has been here without a break.';

--
-- Name: COLUMN node.agent_version; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.agent_version IS 'The mesh-host version the node''s newest report named; null until a report names one (agents before versions were reported name none).';

--
-- Name: COLUMN node.agent_version_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.agent_version_at IS 'When the node first reported the version it runs now.';

--
-- Name: COLUMN node.overlay_key_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node.overlay_key_at IS 'When its overlay key last changed (a rekey, O3); null while it holds the key it enrolled with.';

--
-- Name: enrolled_node; Type: VIEW; Schema: inventory; Owner: mesh_inventory
--

CREATE VIEW inventory.enrolled_node AS
 SELECT node.name,
    node.site,
    node.dialable,
    node.overlay_key,
    node.sealing_key,
    node.enrolled_at
   FROM inventory.node
  WHERE (node.enrolled_at IS NOT NULL);

ALTER TABLE inventory.enrolled_node OWNER TO mesh_inventory;

--
-- Name: VIEW enrolled_node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON VIEW inventory.enrolled_node IS 'Nodes that hold an identity: what other contexts may know of a node (public keys, site, endpoint).';

--
-- Name: declaration_freshness; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.declaration_freshness AS
 SELECT d.node,
    d.serial,
    d.signed_at,
    d.expires_at,
    ((d.expires_at IS NULL) OR (d.expires_at <= now())) AS expired
   FROM ((assignment.node_serial s
     JOIN assignment.declaration d ON (((d.node = s.node) AND (d.serial = s.serial))))
     JOIN inventory.enrolled_node e ON ((e.name = s.node)));

ALTER TABLE assignment.declaration_freshness OWNER TO mesh_assignment;

--
-- Name: VIEW declaration_freshness; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.declaration_freshness IS 'Each enrolled node''s newest declaration: when signed, until when it holds, whether that has passed.';

--
-- Name: COLUMN declaration_freshness.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_freshness.node IS 'An enrolled node.';

--
-- Name: COLUMN declaration_freshness.serial; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_freshness.serial IS 'Its newest declaration.';

--
-- Name: COLUMN declaration_freshness.signed_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_freshness.signed_at IS 'When it was signed.';

--
-- Name: COLUMN declaration_freshness.expires_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_freshness.expires_at IS 'Until when it holds; serve signs it again at half its lifetime.';

--
-- Name: COLUMN declaration_freshness.expired; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_freshness.expired IS 'True once expires_at passed: a host refuses it on arrival and reports it holds a stale one.';

--
-- Name: declaration_status; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.declaration_status AS
 SELECT declaration.node,
    declaration.serial,
    encode(declaration.digest, 'hex'::text) AS digest,
    declaration.issued_at,
    declaration.acknowledged_at,
    declaration.superseded_at,
        CASE
            WHEN (declaration.acknowledged_at IS NOT NULL) THEN 'applied'::text
            WHEN (declaration.superseded_at IS NOT NULL) THEN 'superseded'::text
            ELSE 'sent'::text
        END AS state
   FROM assignment.declaration;

ALTER TABLE assignment.declaration_status OWNER TO mesh_assignment;

--
-- Name: VIEW declaration_status; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.declaration_status IS 'Each declaration and what became of it: sent, applied or superseded.';

--
-- Name: COLUMN declaration_status.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_status.node IS 'The node it was declared to.';

--
-- Name: COLUMN declaration_status.serial; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_status.serial IS 'Its serial; only goes forward per node.';

--
-- Name: COLUMN declaration_status.digest; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_status.digest IS 'sha256 of its signed body, hex.';

--
-- Name: COLUMN declaration_status.issued_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_status.issued_at IS 'When it was composed and signed.';

--
-- Name: COLUMN declaration_status.acknowledged_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_status.acknowledged_at IS 'When the node reported it applied.';

--
-- Name: COLUMN declaration_status.superseded_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_status.superseded_at IS 'When the node reported it skipped for a newer one.';

--
-- Name: COLUMN declaration_status.state; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.declaration_status.state IS 'applied, superseded, or sent (no answer yet).';

--
-- Name: outbox; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.outbox (
    id bigint NOT NULL,
    node text NOT NULL,
    kind text NOT NULL,
    serial bigint NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    attempts integer DEFAULT 0 NOT NULL,
    last_error text,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    delivered_at timestamp with time zone,
    CONSTRAINT outbox_kind_check CHECK ((kind = 'declaration'::text))
);

ALTER TABLE assignment.outbox OWNER TO mesh_assignment;

--
-- Name: TABLE outbox; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.outbox IS 'What the control plane owes each node, one message a row, until the broker confirmed it (W1).';

--
-- Name: COLUMN outbox.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.outbox.node IS 'Whom it is owed to: published to that node''s queue.';

--
-- Name: COLUMN outbox.kind; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.outbox.kind IS 'The message type the host reads it as.';

--
-- Name: COLUMN outbox.serial; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.outbox.serial IS 'The declaration it owes, with node: its envelope is assignment.declaration''s, published as stored (hosts drop what is not newer, so a re-send is harmless).';

--
-- Name: COLUMN outbox.created_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.outbox.created_at IS 'Owed since.';

--
-- Name: COLUMN outbox.attempts; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.outbox.attempts IS 'Publishes tried and not confirmed.';

--
-- Name: COLUMN outbox.last_error; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.outbox.last_error IS 'Why the last attempt failed, as a person reads it.';

--
-- Name: COLUMN outbox.next_attempt_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.outbox.next_attempt_at IS 'Not tried again before this (backoff after a failure).';

--
-- Name: COLUMN outbox.delivered_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.outbox.delivered_at IS 'When the broker confirmed it; null while owed.';

--
-- Name: delivered_newest; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.delivered_newest AS
 SELECT DISTINCT ON (o.node) o.node,
    o.serial,
    o.delivered_at
   FROM assignment.outbox o
  WHERE ((o.kind = 'declaration'::text) AND (o.delivered_at IS NOT NULL))
  ORDER BY o.node, o.serial DESC;

ALTER TABLE assignment.delivered_newest OWNER TO mesh_assignment;

--
-- Name: VIEW delivered_newest; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.delivered_newest IS 'Each node''s newest declaration confirmed onto its queue, and when (W1): a node here that has not applied it in time is wedged (inventory.node_status).';

--
-- Name: firewall_opening; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.firewall_opening AS
 SELECT firewall_openings.node,
    firewall_openings.proto,
    firewall_openings.port,
    firewall_openings.port_to,
    firewall_openings.sources,
    firewall_openings.via,
    firewall_openings.why,
    firewall_openings.origin,
    firewall_openings.reason
   FROM assignment.firewall_openings(true) firewall_openings(node, proto, port, port_to, sources, via, why, origin, reason);

ALTER TABLE assignment.firewall_opening OWNER TO mesh_assignment;

--
-- Name: VIEW firewall_opening; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.firewall_opening IS 'Every opening in every node''s firewall and why it exists (X2): proto, port (to port_to), sources (null = anywhere, {} = nobody yet, so left out), via (the overlay interface, when only overlay traffic may use it), why (the nft comment), origin (base, overlay, provision, module, broker) and the reason in full.';

--
-- Name: freeze_id_seq; Type: SEQUENCE; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE assignment."freeze" ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME assignment.freeze_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: freeze_status; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.freeze_status AS
 SELECT f.id,
    f.from_at,
    f.until_at,
    f.site,
    f.module,
        CASE
            WHEN (f.overridden_at IS NOT NULL) THEN 'overridden'::text
            WHEN (now() < f.from_at) THEN 'waiting'::text
            WHEN (now() < f.until_at) THEN 'holding'::text
            ELSE 'ended'::text
        END AS state,
    (( SELECT count(*) AS count
           FROM assignment.frozen_nodes() z(node, "freeze", until_at)
          WHERE (z."freeze" = f.id)))::integer AS holds,
    f.override_reason,
    f.overridden_at,
    f.ended_at,
    f.made_at
   FROM assignment."freeze" f;

ALTER TABLE assignment.freeze_status OWNER TO mesh_assignment;

--
-- Name: VIEW freeze_status; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.freeze_status IS 'Each change-freeze window: when, where, waiting / holding / ended / overridden, the nodes it holds now.';

--
-- Name: freshness_setting; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.freshness_setting (
    one boolean DEFAULT true NOT NULL,
    lifetime interval DEFAULT '7 days'::interval NOT NULL,
    CONSTRAINT freshness_setting_one_check CHECK (one)
);

ALTER TABLE assignment.freshness_setting OWNER TO mesh_assignment;

--
-- Name: TABLE freshness_setting; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.freshness_setting IS 'How long a declaration holds once signed, for this mesh (one row). serve signs one again at half of it.';

--
-- Name: migration_digest; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.migration_digest (
    name text NOT NULL,
    sha256 text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE assignment.migration_digest OWNER TO mesh_assignment;

--
-- Name: TABLE migration_digest; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.migration_digest IS 'sha256 of each migration file as it ran; an edited file is refused (M1)';

--
-- Name: outbox_id_seq; Type: SEQUENCE; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE assignment.outbox ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME assignment.outbox_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: package_pin; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.package_pin (
    node text NOT NULL,
    name text NOT NULL,
    version text NOT NULL,
    advisory text,
    pinned_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT package_pin_name_check CHECK ((name ~ '^[a-z0-9][a-z0-9+.-]{0,127}$'::text)),
    CONSTRAINT package_pin_version_check CHECK ((inventory.debian_version_key(version) IS NOT NULL))
);

ALTER TABLE assignment.package_pin OWNER TO mesh_assignment;

--
-- Name: TABLE package_pin; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.package_pin IS 'A Debian package a node must run at a version or above, declared to it as a package resource.';

--
-- Name: COLUMN package_pin.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.package_pin.node IS 'The node.';

--
-- Name: COLUMN package_pin.name; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.package_pin.name IS 'The binary package.';

--
-- Name: COLUMN package_pin.version; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.package_pin.version IS 'The lowest version it may run: the host installs it when below.';

--
-- Name: COLUMN package_pin.advisory; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.package_pin.advisory IS 'The advisory whose fix it is, when a rollout of one pinned it.';

--
-- Name: COLUMN package_pin.pinned_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.package_pin.pinned_at IS 'When it was pinned or raised.';

--
-- Name: pending_delivery; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.pending_delivery AS
 SELECT o.node,
    o.kind,
    o.serial,
    o.created_at AS owed_since,
    o.attempts,
    o.last_error,
    o.next_attempt_at
   FROM assignment.outbox o
  WHERE (o.delivered_at IS NULL);

ALTER TABLE assignment.pending_delivery OWNER TO mesh_assignment;

--
-- Name: VIEW pending_delivery; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.pending_delivery IS 'What is owed to whom, since when, how many attempts, and the last error (W1).';

--
-- Name: COLUMN pending_delivery.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.pending_delivery.node IS 'Whom it is owed to.';

--
-- Name: COLUMN pending_delivery.kind; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.pending_delivery.kind IS 'The message type.';

--
-- Name: COLUMN pending_delivery.serial; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.pending_delivery.serial IS 'The declaration serial it carries.';

--
-- Name: COLUMN pending_delivery.owed_since; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.pending_delivery.owed_since IS 'When it became owed.';

--
-- Name: COLUMN pending_delivery.attempts; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.pending_delivery.attempts IS 'Publishes tried and not confirmed by the broker.';

--
-- Name: COLUMN pending_delivery.last_error; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.pending_delivery.last_error IS 'Why the last attempt failed.';

--
-- Name: COLUMN pending_delivery.next_attempt_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.pending_delivery.next_attempt_at IS 'Not tried again before this.';

--
-- Name: pgmigrations; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.pgmigrations (
    id integer NOT NULL,
    name character varying(255) NOT NULL,
    run_on timestamp without time zone NOT NULL
);

ALTER TABLE assignment.pgmigrations OWNER TO mesh_assignment;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE; Schema: assignment; Owner: mesh_assignment
--

CREATE SEQUENCE assignment.pgmigrations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER TABLE assignment.pgmigrations_id_seq OWNER TO mesh_assignment;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE OWNED BY; Schema: assignment; Owner: mesh_assignment
--

ALTER SEQUENCE assignment.pgmigrations_id_seq OWNED BY assignment.pgmigrations.id;

--
-- Name: placement; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.placement AS
 SELECT assignment.module,
    assignment.node
   FROM assignment.assignment;

ALTER TABLE assignment.placement OWNER TO mesh_assignment;

--
-- Name: VIEW placement; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.placement IS 'Module M is assigned to node N.';

--
-- Name: promise_state; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.promise_state AS
 SELECT p.name,
    p.kind,
    assignment.promise_text(p.*) AS promise,
        CASE
            WHEN (b.name IS NULL) THEN 'kept'::text
            ELSE 'broken'::text
        END AS state,
    b.why,
    p.made_at
   FROM (assignment.promise p
     LEFT JOIN assignment.broken_promises() b(name, why) ON ((b.name = p.name)));

ALTER TABLE assignment.promise_state OWNER TO mesh_assignment;

--
-- Name: VIEW promise_state; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.promise_state IS 'Each promise: what it says, kept or broken, and what breaks it.';

--
-- Name: rollout_id_seq; Type: SEQUENCE; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE assignment.rollout ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME assignment.rollout_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: rollout_node; Type: TABLE; Schema: assignment; Owner: mesh_assignment
--

CREATE TABLE assignment.rollout_node (
    rollout bigint NOT NULL,
    node text NOT NULL,
    wave integer NOT NULL,
    "position" integer NOT NULL,
    from_serial bigint NOT NULL,
    released_at timestamp with time zone,
    nothing_owed boolean DEFAULT false NOT NULL,
    restore_owed boolean DEFAULT false NOT NULL,
    CONSTRAINT rollout_node_position_check CHECK (("position" > 0)),
    CONSTRAINT rollout_node_wave_check CHECK ((wave > 0))
);

ALTER TABLE assignment.rollout_node OWNER TO mesh_assignment;

--
-- Name: TABLE rollout_node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON TABLE assignment.rollout_node IS 'Each node a rollout changes: its wave, its place in the canary order, and the declaration it held before.';

--
-- Name: COLUMN rollout_node.from_serial; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_node.from_serial IS 'Its newest declaration when the rollout started: what an abort declares again.';

--
-- Name: COLUMN rollout_node.released_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_node.released_at IS 'When its wave went out; null while held.';

--
-- Name: COLUMN rollout_node.nothing_owed; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_node.nothing_owed IS 'Released, but its composition no longer differed (the change was undone): nothing to apply.';

--
-- Name: COLUMN rollout_node.restore_owed; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_node.restore_owed IS 'Aborted after it was reached: the declaration it held before is owed to it again.';

--
-- Name: rollout_nodes; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.rollout_nodes AS
 SELECT r.id AS rollout,
    x.node,
    x.wave,
    x."position",
    x.state,
    x.why,
    x.from_serial,
    x.newest_serial,
    x.released_at
   FROM (assignment.rollout r
     CROSS JOIN LATERAL assignment.rollout_node_state(r.id) x(node, wave, "position", from_serial, newest_serial, released_at, state, why));

ALTER TABLE assignment.rollout_nodes OWNER TO mesh_assignment;

--
-- Name: VIEW rollout_nodes; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.rollout_nodes IS 'Each node of each rollout: its wave, canary order, held / waiting / applied / failing / restoring and why.';

--
-- Name: COLUMN rollout_nodes.rollout; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_nodes.rollout IS 'The rollout.';

--
-- Name: COLUMN rollout_nodes.node; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_nodes.node IS 'A node it changes.';

--
-- Name: COLUMN rollout_nodes.wave; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_nodes.wave IS 'Its wave.';

--
-- Name: COLUMN rollout_nodes."position"; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_nodes."position" IS 'Its place in the order: canaries first, then a stable shuffle.';

--
-- Name: COLUMN rollout_nodes.state; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_nodes.state IS 'held, waiting, applied, failing, or restoring (owed its old declaration after an abort).';

--
-- Name: COLUMN rollout_nodes.why; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_nodes.why IS 'The state in a sentence, naming the serial or the failure.';

--
-- Name: COLUMN rollout_nodes.from_serial; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_nodes.from_serial IS 'The serial it held when the rollout started.';

--
-- Name: COLUMN rollout_nodes.newest_serial; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_nodes.newest_serial IS 'Its newest declaration now.';

--
-- Name: COLUMN rollout_nodes.released_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_nodes.released_at IS 'When its wave released it.';

--
-- Name: rollout_status; Type: VIEW; Schema: assignment; Owner: mesh_assignment
--

CREATE VIEW assignment.rollout_status AS
 SELECT r.id,
    r.state,
    r.wave,
    cardinality(r.waves) AS waves_given,
    ( SELECT max(n.wave) AS max
           FROM assignment.rollout_node n
          WHERE (n.rollout = r.id)) AS waves,
    r.waves AS wave_list,
    r.wait_healthy,
    r.max_failing,
    r.first,
    (( SELECT count(*) AS count
           FROM assignment.rollout_node n
          WHERE (n.rollout = r.id)))::integer AS nodes,
    (( SELECT count(*) AS count
           FROM assignment.rollout_node n
          WHERE ((n.rollout = r.id) AND (n.released_at IS NOT NULL))))::integer AS released,
    s.applied,
    s.failing,
    s.waiting,
    r.reason,
    r.held_at,
    r.started_at,
    r.wave_started,
    r.ended_at
   FROM (assignment.rollout r
     CROSS JOIN LATERAL ( SELECT (count(*) FILTER (WHERE (x.state = 'applied'::text)))::integer AS applied,
            (count(*) FILTER (WHERE (x.state = 'failing'::text)))::integer AS failing,
            (count(*) FILTER (WHERE (x.state = ANY (ARRAY['waiting'::text, 'restoring'::text]))))::integer AS waiting
           FROM assignment.rollout_node_state(r.id) x(node, wave, "position", from_serial, newest_serial, released_at, state, why)) s);

ALTER TABLE assignment.rollout_status OWNER TO mesh_assignment;

--
-- Name: VIEW rollout_status; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON VIEW assignment.rollout_status IS 'Each rollout: state, the wave out now of how many, nodes released, applied, failing, waiting, and why it halted or was aborted.';

--
-- Name: COLUMN rollout_status.id; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.id IS 'The rollout.';

--
-- Name: COLUMN rollout_status.state; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.state IS 'holding, rolling, paused, halted, done, aborted or released.';

--
-- Name: COLUMN rollout_status.wave; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.wave IS 'The wave out now (1-based); 0 before the start.';

--
-- Name: COLUMN rollout_status.waves_given; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.waves_given IS 'How many waves were given.';

--
-- Name: COLUMN rollout_status.waves; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.waves IS 'How many waves its nodes fall into.';

--
-- Name: COLUMN rollout_status.wave_list; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.wave_list IS 'The waves as given (1, 10%, 100%).';

--
-- Name: COLUMN rollout_status.wait_healthy; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.wait_healthy IS 'How long a wave may take to report applied before the rollout halts.';

--
-- Name: COLUMN rollout_status.max_failing; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.max_failing IS 'How many released nodes may fail before it halts.';

--
-- Name: COLUMN rollout_status.first; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.first IS 'Canaries pinned by the operator, in order.';

--
-- Name: COLUMN rollout_status.nodes; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.nodes IS 'How many nodes it changes.';

--
-- Name: COLUMN rollout_status.released; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.released IS 'How many were released.';

--
-- Name: COLUMN rollout_status.applied; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.applied IS 'How many applied their new declaration.';

--
-- Name: COLUMN rollout_status.failing; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.failing IS 'How many failed to apply it, or refused it.';

--
-- Name: COLUMN rollout_status.waiting; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.waiting IS 'How many were released and have not answered yet, or are owed their old declaration again.';

--
-- Name: COLUMN rollout_status.reason; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.reason IS 'Why it halted or was aborted, naming the nodes.';

--
-- Name: COLUMN rollout_status.held_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.held_at IS 'When changes began to be held.';

--
-- Name: COLUMN rollout_status.started_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.started_at IS 'When its first wave went out.';

--
-- Name: COLUMN rollout_status.wave_started; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.wave_started IS 'When the wave out now went out (or was resumed).';

--
-- Name: COLUMN rollout_status.ended_at; Type: COMMENT; Schema: assignment; Owner: mesh_assignment
--

COMMENT ON COLUMN assignment.rollout_status.ended_at IS 'When it ended.';

--
-- Name: kind; Type: TABLE; Schema: audit; Owner: mesh_audit
--

CREATE TABLE audit.kind (
    name text NOT NULL,
    meaning text NOT NULL,
    CONSTRAINT kind_name_check CHECK ((name ~ '^[a-z][a-z-]{0,30}$'::text))
);

ALTER TABLE audit.kind OWNER TO mesh_audit;

--
-- Name: TABLE kind; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON TABLE audit.kind IS 'What a row of the history may record. A new kind is a row here (and a trigger where its fact lands); `mesh log --kind` reads this list.';

--
-- Name: COLUMN kind.name; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.kind.name IS 'The kind, as mesh log prints it and --kind takes it (a prefix before a dash selects a family: --kind token).';

--
-- Name: COLUMN kind.meaning; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.kind.meaning IS 'What a row of this kind says happened.';

--
-- Name: log; Type: VIEW; Schema: audit; Owner: mesh_audit
--

CREATE VIEW audit.log AS
 SELECT e.seq,
    e.at,
    e.kind,
    e.node,
    e.actor,
    e.role,
    e.detail,
    COALESCE(( SELECT string_agg(((d.key || '='::text) || d.value), ' '::text ORDER BY d.key) AS string_agg
           FROM jsonb_each_text(e.detail) d(key, value)), ''::text) AS what
   FROM audit.event e;

ALTER TABLE audit.log OWNER TO mesh_audit;

--
-- Name: VIEW log; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON VIEW audit.log IS 'The history for a person: seq, when, kind, node, who, and its facts as key=value.';

--
-- Name: COLUMN log.seq; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.log.seq IS '1, 2, 3 ... with no gap: the order of the hash chain.';

--
-- Name: COLUMN log.at; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.log.at IS 'When: the time of the transaction that made the change.';

--
-- Name: COLUMN log.kind; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.log.kind IS 'What happened (one of audit.kind, as mesh log --kind takes it).';

--
-- Name: COLUMN log.node; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.log.node IS 'The node it concerns, when one does.';

--
-- Name: COLUMN log.actor; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.log.actor IS 'Who: the database role of the session that made the change.';

--
-- Name: COLUMN log.role; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.log.role IS 'The database role of the session that made the change.';

--
-- Name: COLUMN log.detail; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.log.detail IS 'The facts of the change (serial, digest, fault and reason ...), never a secret.';

--
-- Name: COLUMN log.what; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.log.what IS 'detail as key=value pairs, as mesh log prints it.';

--
-- Name: migration_digest; Type: TABLE; Schema: audit; Owner: mesh_audit
--

CREATE TABLE audit.migration_digest (
    name text NOT NULL,
    sha256 text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE audit.migration_digest OWNER TO mesh_audit;

--
-- Name: TABLE migration_digest; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON TABLE audit.migration_digest IS 'sha256 of each migration file as it ran; an edited file is refused (M1)';

--
-- Name: pgmigrations; Type: TABLE; Schema: audit; Owner: mesh_audit
--

CREATE TABLE audit.pgmigrations (
    id integer NOT NULL,
    name character varying(255) NOT NULL,
    run_on timestamp without time zone NOT NULL
);

ALTER TABLE audit.pgmigrations OWNER TO mesh_audit;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE; Schema: audit; Owner: mesh_audit
--

CREATE SEQUENCE audit.pgmigrations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER TABLE audit.pgmigrations_id_seq OWNER TO mesh_audit;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE OWNED BY; Schema: audit; Owner: mesh_audit
--

ALTER SEQUENCE audit.pgmigrations_id_seq OWNED BY audit.pgmigrations.id;

--
-- Name: watched; Type: TABLE; Schema: audit; Owner: mesh_audit
--

CREATE TABLE audit.watched (
    on_table text NOT NULL,
    trigger text NOT NULL
);

ALTER TABLE audit.watched OWNER TO mesh_audit;

--
-- Name: TABLE watched; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON TABLE audit.watched IS 'The audit triggers (C3): each must exist and be enabled on its table; mesh audit verify checks them, and no context may drop or disable one.';

--
-- Name: COLUMN watched.on_table; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.watched.on_table IS 'The table, schema-qualified (inventory.token).';

--
-- Name: COLUMN watched.trigger; Type: COMMENT; Schema: audit; Owner: mesh_audit
--

COMMENT ON COLUMN audit.watched.trigger IS 'The trigger''s name on that table.';

--
-- Name: agent_chunk; Type: TABLE; Schema: catalogue; Owner: mesh_catalogue
--

CREATE TABLE catalogue.agent_chunk (
    sha256 text NOT NULL,
    n integer NOT NULL,
    bytes bytea NOT NULL,
    CONSTRAINT agent_chunk_n_check CHECK ((n >= 0))
);

ALTER TABLE catalogue.agent_chunk OWNER TO mesh_catalogue;

--
-- Name: TABLE agent_chunk; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON TABLE catalogue.agent_chunk IS 'The bytes of each agent package, in order: what serve hands a node a few at a time.';

--
-- Name: COLUMN agent_chunk.n; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.agent_chunk.n IS 'Its place in the package, from 0.';

--
-- Name: agent_package; Type: TABLE; Schema: catalogue; Owner: mesh_catalogue
--

CREATE TABLE catalogue.agent_package (
    version text NOT NULL,
    sha256 text NOT NULL,
    size bigint NOT NULL,
    chunks integer NOT NULL,
    added_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT agent_package_chunks_check CHECK ((chunks > 0)),
    CONSTRAINT agent_package_sha256_check CHECK ((sha256 ~ '^[0-9a-f]{64}$'::text)),
    CONSTRAINT agent_package_size_check CHECK ((size > 0)),
    CONSTRAINT agent_package_version_check CHECK ((version ~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$'::text))
);

ALTER TABLE catalogue.agent_package OWNER TO mesh_catalogue;

--
-- Name: TABLE agent_package; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON TABLE catalogue.agent_package IS 'Each mesh-host package a fleet may run: its version, the sha256 and size of its bytes, and how many chunks hold them.';

--
-- Name: COLUMN agent_package.version; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.agent_package.version IS 'The mesh-host version the package installs, as its agent reports it.';

--
-- Name: COLUMN agent_package.sha256; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.agent_package.sha256 IS 'Hex sha256 of the whole package: what the declaration carries and the host checks.';

--
-- Name: COLUMN agent_package.size; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.agent_package.size IS 'Bytes in the whole package.';

--
-- Name: COLUMN agent_package.chunks; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.agent_package.chunks IS 'How many rows of agent_chunk hold the bytes, numbered from 0.';

--
-- Name: agent_packages; Type: VIEW; Schema: catalogue; Owner: mesh_catalogue
--

CREATE VIEW catalogue.agent_packages AS
 SELECT agent_package.version,
    agent_package.sha256,
    agent_package.size,
    agent_package.chunks,
    agent_package.added_at
   FROM catalogue.agent_package;

ALTER TABLE catalogue.agent_packages OWNER TO mesh_catalogue;

--
-- Name: VIEW agent_packages; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON VIEW catalogue.agent_packages IS 'Each agent package and its sha256 and size: what assignment declares a node to run.';

--
-- Name: build_progress; Type: TABLE; Schema: catalogue; Owner: mesh_catalogue
--

CREATE TABLE catalogue.build_progress (
    seq bigint NOT NULL,
    request_id uuid NOT NULL,
    builder text NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    line text NOT NULL,
    CONSTRAINT build_progress_line_check CHECK ((length(line) <= 2000))
);

ALTER TABLE catalogue.build_progress OWNER TO mesh_catalogue;

--
-- Name: TABLE build_progress; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON TABLE catalogue.build_progress IS 'What builders said while building: the requester prints these as they arrive. A builder that died mid-build leaves its lines here too.';

--
-- Name: COLUMN build_progress.seq; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_progress.seq IS 'Arrival order; the requester reads lines after the last seq it printed.';

--
-- Name: COLUMN build_progress.request_id; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_progress.request_id IS 'The request it is about.';

--
-- Name: COLUMN build_progress.builder; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_progress.builder IS 'The builder account that said it (checked by the broker).';

--
-- Name: COLUMN build_progress.at; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_progress.at IS 'When it was recorded.';

--
-- Name: COLUMN build_progress.line; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_progress.line IS 'One line: started, a build step, pushing.';

--
-- Name: build_progress_seq_seq; Type: SEQUENCE; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE catalogue.build_progress ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME catalogue.build_progress_seq_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: build_request; Type: TABLE; Schema: catalogue; Owner: mesh_catalogue
--

CREATE TABLE catalogue.build_request (
    id uuid NOT NULL,
    module text NOT NULL,
    ref text NOT NULL,
    requested_at timestamp with time zone DEFAULT now() NOT NULL,
    state text DEFAULT 'requested'::text NOT NULL,
    CONSTRAINT build_request_ref_check CHECK (((ref ~ '^[A-Za-z0-9._/-]{1,200}$'::text) AND (ref !~ '^-'::text))),
    CONSTRAINT build_request_state_check CHECK ((state = ANY (ARRAY['requested'::text, 'building'::text, 'built'::text, 'failed'::text])))
);

ALTER TABLE catalogue.build_request OWNER TO mesh_catalogue;

--
-- Name: TABLE build_request; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON TABLE catalogue.build_request IS 'A build asked for: recorded before it is published, so an answer always finds its request.';

--
-- Name: COLUMN build_request.id; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_request.id IS 'Also the correlation id of the request and of every message a builder sends about it.';

--
-- Name: COLUMN build_request.module; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_request.module IS 'The module to build from its source.';

--
-- Name: COLUMN build_request.ref; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_request.ref IS 'What to build: a branch, a tag, a commit, or HEAD.';

--
-- Name: COLUMN build_request.requested_at; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_request.requested_at IS 'When it was asked for.';

--
-- Name: COLUMN build_request.state; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_request.state IS 'requested: on the queue; building: a builder said it started; built or failed: answered (see build_result).';

--
-- Name: build_result; Type: TABLE; Schema: catalogue; Owner: mesh_catalogue
--

CREATE TABLE catalogue.build_result (
    request_id uuid NOT NULL,
    builder text NOT NULL,
    ok boolean NOT NULL,
    commit_sha text,
    image text,
    digest text,
    error text,
    log_tail text,
    finished_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT build_result_check CHECK (((NOT ok) OR ((commit_sha IS NOT NULL) AND (image IS NOT NULL) AND (digest IS NOT NULL)))),
    CONSTRAINT build_result_check1 CHECK ((ok OR (error IS NOT NULL))),
    CONSTRAINT build_result_commit_sha_check CHECK ((commit_sha ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'::text)),
    CONSTRAINT build_result_digest_check CHECK ((digest ~ '^sha256:[0-9a-f]{64}$'::text)),
    CONSTRAINT build_result_error_check CHECK ((length(error) <= 2000)),
    CONSTRAINT build_result_image_check CHECK ((image ~ '^[A-Za-z0-9][A-Za-z0-9._/:-]{0,200}$'::text)),
    CONSTRAINT build_result_log_tail_check CHECK ((length(log_tail) <= 16000))
);

ALTER TABLE catalogue.build_result OWNER TO mesh_catalogue;

--
-- Name: TABLE build_result; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON TABLE catalogue.build_result IS 'The one answer a request gets. The primary key is the "exactly once": a redelivered request built again, or a second builder, finds the row taken.';

--
-- Name: COLUMN build_result.request_id; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_result.request_id IS 'The request answered.';

--
-- Name: COLUMN build_result.builder; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_result.builder IS 'The builder whose answer was recorded.';

--
-- Name: COLUMN build_result.ok; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_result.ok IS 'Built and pushed; false is a failure, which is an answer too.';

--
-- Name: COLUMN build_result.commit_sha; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_result.commit_sha IS 'The commit built (resolved from the request''s ref); set on failures too when the clone got that far.';

--
-- Name: COLUMN build_result.image; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_result.image IS 'The repository pushed to, without tag or digest: REGISTRY/MODULE.';

--
-- Name: COLUMN build_result.digest; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_result.digest IS 'The manifest digest the registry holds; nodes run image@digest.';

--
-- Name: COLUMN build_result.error; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_result.error IS 'Why it failed, in one sentence.';

--
-- Name: COLUMN build_result.log_tail; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_result.log_tail IS 'The end of the build''s output, for the requester to read.';

--
-- Name: COLUMN build_result.finished_at; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_result.finished_at IS 'When the answer was recorded.';

--
-- Name: build_status; Type: VIEW; Schema: catalogue; Owner: mesh_catalogue
--

CREATE VIEW catalogue.build_status AS
 SELECT r.id,
    r.module,
    r.ref,
    r.state,
    r.requested_at,
    b.ok,
    b.builder,
    b.commit_sha,
    b.image,
    b.digest,
    b.error,
    b.log_tail,
    b.finished_at
   FROM (catalogue.build_request r
     LEFT JOIN catalogue.build_result b ON ((b.request_id = r.id)));

ALTER TABLE catalogue.build_status OWNER TO mesh_catalogue;

--
-- Name: VIEW build_status; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON VIEW catalogue.build_status IS 'Each build request with its answer, if it has one.';

--
-- Name: COLUMN build_status.id; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.id IS 'The build request, also the correlation id of every message about it.';

--
-- Name: COLUMN build_status.module; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.module IS 'The module to build.';

--
-- Name: COLUMN build_status.ref; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.ref IS 'What was asked for: a branch, a tag, a commit or HEAD.';

--
-- Name: COLUMN build_status.state; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.state IS 'requested, building, built or failed.';

--
-- Name: COLUMN build_status.requested_at; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.requested_at IS 'When it was asked for.';

--
-- Name: COLUMN build_status.ok; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.ok IS 'Built and pushed; false for a failure; null while unanswered.';

--
-- Name: COLUMN build_status.builder; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.builder IS 'The builder whose answer was recorded.';

--
-- Name: COLUMN build_status.commit_sha; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.commit_sha IS 'The commit built.';

--
-- Name: COLUMN build_status.image; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.image IS 'The repository pushed to.';

--
-- Name: COLUMN build_status.digest; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.digest IS 'The manifest digest pushed.';

--
-- Name: COLUMN build_status.error; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.error IS 'Why it failed, in one sentence.';

--
-- Name: COLUMN build_status.log_tail; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.log_tail IS 'The end of the build''s output.';

--
-- Name: COLUMN build_status.finished_at; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.build_status.finished_at IS 'When the answer was recorded.';

--
-- Name: last_build; Type: VIEW; Schema: catalogue; Owner: mesh_catalogue
--

CREATE VIEW catalogue.last_build AS
 SELECT DISTINCT ON (r.module) r.module,
    b.request_id,
    b.commit_sha,
    b.image,
    b.digest,
    b.finished_at,
    b.builder
   FROM (catalogue.build_result b
     JOIN catalogue.build_request r ON ((r.id = b.request_id)))
  WHERE b.ok
  ORDER BY r.module, b.finished_at DESC, b.request_id;

ALTER TABLE catalogue.last_build OWNER TO mesh_catalogue;

--
-- Name: VIEW last_build; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON VIEW catalogue.last_build IS 'Each module''s latest successful build: commit, image and digest.';

--
-- Name: migration_digest; Type: TABLE; Schema: catalogue; Owner: mesh_catalogue
--

CREATE TABLE catalogue.migration_digest (
    name text NOT NULL,
    sha256 text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE catalogue.migration_digest OWNER TO mesh_catalogue;

--
-- Name: TABLE migration_digest; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON TABLE catalogue.migration_digest IS 'sha256 of each migration file as it ran; an edited file is refused (M1)';

--
-- Name: module; Type: TABLE; Schema: catalogue; Owner: mesh_catalogue
--

CREATE TABLE catalogue.module (
    name text NOT NULL,
    version integer DEFAULT 1 NOT NULL,
    resources jsonb NOT NULL,
    origin text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT module_name_check CHECK ((name ~ '^[a-z][a-z0-9-]{0,62}$'::text)),
    CONSTRAINT module_origin_check CHECK ((origin = ANY (ARRAY['handed'::text, 'built'::text, 'shipped'::text]))),
    CONSTRAINT module_resources_check CHECK ((jsonb_typeof(resources) = 'array'::text)),
    CONSTRAINT module_version_check CHECK ((version > 0))
);

ALTER TABLE catalogue.module OWNER TO mesh_catalogue;

--
-- Name: TABLE module; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON TABLE catalogue.module IS 'A module: the resources it puts on every node it is assigned to.';

--
-- Name: COLUMN module.name; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module.name IS 'Its name; assignments and builds refer to it.';

--
-- Name: COLUMN module.version; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module.version IS 'Goes up each time its resources change; unchanged resources keep the version.';

--
-- Name: COLUMN module.resources; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module.resources IS 'The resources, checked by the same parser the host uses (src/wire/parse_resources.ts).';

--
-- Name: COLUMN module.origin; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module.origin IS 'handed: added by hand from a file; built: from a build of its source; shipped: carried with the control plane.';

--
-- Name: COLUMN module.updated_at; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module.updated_at IS 'When its resources last changed.';

--
-- Name: module_resources; Type: VIEW; Schema: catalogue; Owner: mesh_catalogue
--

CREATE VIEW catalogue.module_resources AS
 SELECT module.name,
    module.version,
    module.resources
   FROM catalogue.module;

ALTER TABLE catalogue.module_resources OWNER TO mesh_catalogue;

--
-- Name: VIEW module_resources; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON VIEW catalogue.module_resources IS 'What assignment composes declarations from.';

--
-- Name: source; Type: TABLE; Schema: catalogue; Owner: mesh_catalogue
--

CREATE TABLE catalogue.source (
    module text NOT NULL,
    git_url text NOT NULL,
    path text DEFAULT '.'::text NOT NULL,
    ref text DEFAULT 'HEAD'::text NOT NULL,
    head_commit text,
    head_seen_at timestamp with time zone,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    image text NOT NULL,
    CONSTRAINT source_git_url_check CHECK (((git_url <> ''::text) AND (git_url !~ '^-'::text) AND (length(git_url) <= 2000))),
    CONSTRAINT source_head_commit_check CHECK ((head_commit ~ '^[0-9a-f]{40}([0-9a-f]{24})?$'::text)),
    CONSTRAINT source_image_check CHECK (((image ~ '^[A-Za-z0-9][A-Za-z0-9._/:-]{0,200}$'::text) AND (image ~ '^[^/]+/[^/]'::text))),
    CONSTRAINT source_module_check CHECK ((module ~ '^[a-z][a-z0-9-]{0,62}$'::text)),
    CONSTRAINT source_path_check CHECK (((length(path) <= 500) AND (path ~ '^[A-Za-z0-9._/-]+$'::text) AND (path !~ '(^|/)\.\.(/|$)'::text) AND (path !~ '^/'::text))),
    CONSTRAINT source_ref_check CHECK (((ref ~ '^[A-Za-z0-9._/-]{1,200}$'::text) AND (ref !~ '^-'::text)))
);

ALTER TABLE catalogue.source OWNER TO mesh_catalogue;

--
-- Name: TABLE source; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON TABLE catalogue.source IS 'A module''s git source: a builder clones it; its recorded head says whether the built module is behind.';

--
-- Name: COLUMN source.module; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.source.module IS 'The module built from it (the module row appears with the first successful build).';

--
-- Name: COLUMN source.git_url; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.source.git_url IS 'What a builder clones: a URL git understands, or a local path on the build machine.';

--
-- Name: COLUMN source.path; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.source.path IS 'The folder inside the repository holding the Containerfile; relative, never above the root.';

--
-- Name: COLUMN source.ref; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.source.ref IS 'The branch or tag the module follows; HEAD is the repository''s default branch.';

--
-- Name: COLUMN source.head_commit; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.source.head_commit IS 'The commit REF pointed at when last looked at (by a builder, or mesh module list --refresh).';

--
-- Name: COLUMN source.head_seen_at; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.source.head_seen_at IS 'When head_commit was seen; an older sighting never overwrites a newer one.';

--
-- Name: COLUMN source.updated_at; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.source.updated_at IS 'When the URL, path or ref last changed.';

--
-- Name: COLUMN source.image; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.source.image IS 'The registry and repository the module''s images come from (REGISTRY/REPOSITORY): a build result naming another is refused.';

--
-- Name: module_status; Type: VIEW; Schema: catalogue; Owner: mesh_catalogue
--

CREATE VIEW catalogue.module_status AS
 SELECT COALESCE(m.name, s.module) AS module,
    m.version,
        CASE
            WHEN (m.name IS NULL) THEN 'not built yet'::text
            ELSE m.origin
        END AS origin,
    lb.commit_sha AS built_commit,
    lb.digest,
    lb.image,
    lb.finished_at AS built_at,
    s.git_url AS source,
    s.ref AS source_ref,
    s.head_commit AS source_head,
    s.head_seen_at,
        CASE
            WHEN ((s.head_commit IS NULL) OR (lb.commit_sha IS NULL) OR (m.origin IS DISTINCT FROM 'built'::text)) THEN NULL::boolean
            ELSE (s.head_commit <> lb.commit_sha)
        END AS behind,
    COALESCE(p.nodes, '{}'::text[]) AS nodes
   FROM (((catalogue.module m
     FULL JOIN catalogue.source s ON ((s.module = m.name)))
     LEFT JOIN catalogue.last_build lb ON ((lb.module = COALESCE(m.name, s.module))))
     LEFT JOIN catalogue.placements() p(module, nodes) ON ((p.module = COALESCE(m.name, s.module))));

ALTER TABLE catalogue.module_status OWNER TO mesh_catalogue;

--
-- Name: VIEW module_status; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON VIEW catalogue.module_status IS 'The catalogue (B2): each module, its version, where it came from (built from a commit, handed over, shipped), whether it is behind its source, and the machines it runs on. mesh module list prints this.';

--
-- Name: COLUMN module_status.module; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.module IS 'The module''s name.';

--
-- Name: COLUMN module_status.version; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.version IS 'Goes up each time its resources change; null until it exists.';

--
-- Name: COLUMN module_status.origin; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.origin IS 'built, handed, shipped, or "not built yet" for a source never built.';

--
-- Name: COLUMN module_status.built_commit; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.built_commit IS 'The commit its last successful build was made from.';

--
-- Name: COLUMN module_status.digest; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.digest IS 'The manifest digest of its last built image; nodes run image@digest.';

--
-- Name: COLUMN module_status.image; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.image IS 'The repository its last build was pushed to: REGISTRY/MODULE.';

--
-- Name: COLUMN module_status.built_at; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.built_at IS 'When its last successful build was recorded.';

--
-- Name: COLUMN module_status.source; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.source IS 'The git repository it is built from; null for a module with no source.';

--
-- Name: COLUMN module_status.source_ref; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.source_ref IS 'The branch or tag it follows.';

--
-- Name: COLUMN module_status.source_head; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.source_head IS 'The commit source_ref pointed at when last looked at.';

--
-- Name: COLUMN module_status.head_seen_at; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.head_seen_at IS 'When source_head was seen.';

--
-- Name: COLUMN module_status.behind; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.behind IS 'true: the source has moved past the built commit; false: current; null: not known (never built, handed over, or the source head never seen).';

--
-- Name: COLUMN module_status.nodes; Type: COMMENT; Schema: catalogue; Owner: mesh_catalogue
--

COMMENT ON COLUMN catalogue.module_status.nodes IS 'The machines assigned to run it.';

--
-- Name: pgmigrations; Type: TABLE; Schema: catalogue; Owner: mesh_catalogue
--

CREATE TABLE catalogue.pgmigrations (
    id integer NOT NULL,
    name character varying(255) NOT NULL,
    run_on timestamp without time zone NOT NULL
);

ALTER TABLE catalogue.pgmigrations OWNER TO mesh_catalogue;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE; Schema: catalogue; Owner: mesh_catalogue
--

CREATE SEQUENCE catalogue.pgmigrations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER TABLE catalogue.pgmigrations_id_seq OWNER TO mesh_catalogue;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE OWNED BY; Schema: catalogue; Owner: mesh_catalogue
--

ALTER SEQUENCE catalogue.pgmigrations_id_seq OWNED BY catalogue.pgmigrations.id;

--
-- Name: advisory; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.advisory (
    id text NOT NULL,
    summary text DEFAULT ''::text NOT NULL,
    modified text,
    loaded_at timestamp with time zone DEFAULT now() NOT NULL,
    document jsonb NOT NULL,
    CONSTRAINT advisory_id_check CHECK ((id ~ '^[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}$'::text))
);

ALTER TABLE inventory.advisory OWNER TO mesh_inventory;

--
-- Name: TABLE advisory; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.advisory IS 'An advisory in the OSV format, loaded from a file (mesh advisories load): nothing is fetched.';

--
-- Name: COLUMN advisory.id; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory.id IS 'Its OSV id (DSA-5532-1, CVE-2023-5678, ...).';

--
-- Name: COLUMN advisory.summary; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory.summary IS 'Its summary, or its details'' first line.';

--
-- Name: COLUMN advisory.modified; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory.modified IS 'When its publisher last changed it, as the document says.';

--
-- Name: COLUMN advisory.loaded_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory.loaded_at IS 'When it was loaded here.';

--
-- Name: COLUMN advisory.document; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory.document IS 'The OSV document as loaded.';

--
-- Name: advisory_range; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.advisory_range (
    advisory text NOT NULL,
    package text NOT NULL,
    introduced text NOT NULL,
    fixed text,
    last_affected text,
    introduced_key bytea GENERATED ALWAYS AS (inventory.debian_version_key(introduced)) STORED NOT NULL,
    fixed_key bytea GENERATED ALWAYS AS (inventory.debian_version_key(fixed)) STORED,
    last_key bytea GENERATED ALWAYS AS (inventory.debian_version_key(last_affected)) STORED,
    CONSTRAINT advisory_range_check CHECK (((fixed IS NULL) OR (last_affected IS NULL)))
);

ALTER TABLE inventory.advisory_range OWNER TO mesh_inventory;

--
-- Name: TABLE advisory_range; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.advisory_range IS 'Each range of Debian versions an advisory says is affected: from introduced, up to (not including) fixed or up to and including last_affected; neither: every version from introduced.';

--
-- Name: COLUMN advisory_range.advisory; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory_range.advisory IS 'The advisory.';

--
-- Name: COLUMN advisory_range.package; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory_range.package IS 'The package it names: Debian''s advisories name the source package, matched against both a package''s source and its own name.';

--
-- Name: COLUMN advisory_range.introduced; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory_range.introduced IS 'The first version affected (0: every version before the fix).';

--
-- Name: COLUMN advisory_range.fixed; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory_range.fixed IS 'The first version not affected: what a rollout declares.';

--
-- Name: COLUMN advisory_range.last_affected; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory_range.last_affected IS 'The last version affected, when the advisory names no fix.';

--
-- Name: COLUMN advisory_range.introduced_key; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory_range.introduced_key IS 'introduced in dpkg''s order.';

--
-- Name: COLUMN advisory_range.fixed_key; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory_range.fixed_key IS 'fixed in dpkg''s order.';

--
-- Name: COLUMN advisory_range.last_key; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.advisory_range.last_key IS 'last_affected in dpkg''s order.';

--
-- Name: node_package; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.node_package (
    node text NOT NULL,
    name text NOT NULL,
    arch text NOT NULL,
    version text NOT NULL,
    source text NOT NULL,
    version_key bytea GENERATED ALWAYS AS (inventory.debian_version_key(version)) STORED NOT NULL,
    CONSTRAINT node_package_arch_check CHECK ((arch ~ '^[a-z0-9][a-z0-9-]{0,31}$'::text)),
    CONSTRAINT node_package_name_check CHECK ((name ~ '^[a-z0-9][a-z0-9+.-]{0,127}$'::text)),
    CONSTRAINT node_package_source_check CHECK ((source ~ '^[a-z0-9][a-z0-9+.-]{0,127}$'::text))
);

ALTER TABLE inventory.node_package OWNER TO mesh_inventory;

--
-- Name: TABLE node_package; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.node_package IS 'Each Debian package a node reported installed (its dpkg status), kept from the changes its reports carry.';

--
-- Name: COLUMN node_package.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_package.node IS 'The node that runs it.';

--
-- Name: COLUMN node_package.name; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_package.name IS 'The binary package''s name.';

--
-- Name: COLUMN node_package.arch; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_package.arch IS 'Its architecture (amd64, all, ...): one name may be installed for several.';

--
-- Name: COLUMN node_package.version; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_package.version IS 'The version installed, as dpkg writes it.';

--
-- Name: COLUMN node_package.source; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_package.source IS 'The source package it was built from (the name itself when dpkg names none): what Debian advisories name.';

--
-- Name: COLUMN node_package.version_key; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_package.version_key IS 'The version as a key in dpkg''s order (inventory.debian_version_key).';

--
-- Name: advisory_node; Type: VIEW; Schema: inventory; Owner: mesh_inventory
--

CREATE VIEW inventory.advisory_node AS
 WITH hit AS (
         SELECT r.advisory,
            r.package,
            r.fixed,
            p.node,
            p.name,
            p.arch,
            p.version
           FROM (inventory.advisory_range r
             JOIN inventory.node_package p ON ((p.source = r.package)))
          WHERE ((p.version_key >= r.introduced_key) AND ((r.fixed_key IS NULL) OR (p.version_key < r.fixed_key)) AND ((r.last_key IS NULL) OR (p.version_key <= r.last_key)))
        UNION
         SELECT r.advisory,
            r.package,
            r.fixed,
            p.node,
            p.name,
            p.arch,
            p.version
           FROM (inventory.advisory_range r
             JOIN inventory.node_package p ON (((p.name = r.package) AND (p.source <> r.package))))
          WHERE ((p.version_key >= r.introduced_key) AND ((r.fixed_key IS NULL) OR (p.version_key < r.fixed_key)) AND ((r.last_key IS NULL) OR (p.version_key <= r.last_key)))
        )
 SELECT hit.advisory,
    hit.package,
    hit.node,
    hit.name,
    hit.arch,
    hit.version,
    hit.fixed
   FROM hit;

ALTER TABLE inventory.advisory_node OWNER TO mesh_inventory;

--
-- Name: VIEW advisory_node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON VIEW inventory.advisory_node IS 'Each node running a package version a loaded advisory says is affected, and the version that fixes it (null: no fix named).';

--
-- Name: agent_skew; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.agent_skew (
    one boolean DEFAULT true NOT NULL,
    control_version text,
    stated_at timestamp with time zone,
    minors_behind integer DEFAULT 1 NOT NULL,
    CONSTRAINT agent_skew_control_version_check CHECK ((control_version ~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$'::text)),
    CONSTRAINT agent_skew_minors_behind_check CHECK (((minors_behind >= 0) AND (minors_behind <= 100))),
    CONSTRAINT agent_skew_one_check CHECK (one)
);

ALTER TABLE inventory.agent_skew OWNER TO mesh_inventory;

--
-- Name: TABLE agent_skew; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.agent_skew IS 'One row: the skew rule. The control plane speaks with agents of its own major whose minor is its own or up to minors_behind before it.';

--
-- Name: COLUMN agent_skew.one; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.agent_skew.one IS 'There is exactly one row.';

--
-- Name: COLUMN agent_skew.control_version; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.agent_skew.control_version IS 'The version of the control plane, as mesh serve states it when it starts; null until one has.';

--
-- Name: COLUMN agent_skew.stated_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.agent_skew.stated_at IS 'When it was last stated.';

--
-- Name: COLUMN agent_skew.minors_behind; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.agent_skew.minors_behind IS 'How many minors before its own the control plane still speaks with (1: the current minor and the one before).';

--
-- Name: apply_failure; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.apply_failure (
    node text NOT NULL,
    serial bigint NOT NULL,
    failed jsonb NOT NULL,
    reported_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT apply_failure_failed_check CHECK (((jsonb_typeof(failed) = 'array'::text) AND (jsonb_array_length(failed) > 0)))
);

ALTER TABLE inventory.apply_failure OWNER TO mesh_inventory;

--
-- Name: TABLE apply_failure; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.apply_failure IS 'The last apply each node said it could not finish: which resources failed and why. Cleared by a clean report of that serial or newer.';

--
-- Name: COLUMN apply_failure.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.apply_failure.node IS 'The node.';

--
-- Name: COLUMN apply_failure.serial; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.apply_failure.serial IS 'The declaration it was applying.';

--
-- Name: COLUMN apply_failure.failed; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.apply_failure.failed IS 'The resources it could not apply: [{id, error}].';

--
-- Name: COLUMN apply_failure.reported_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.apply_failure.reported_at IS 'When the report saying so arrived.';

--
-- Name: refusal; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.refusal (
    node text NOT NULL,
    serial bigint,
    fault text NOT NULL,
    reason text NOT NULL,
    refused_at timestamp with time zone DEFAULT now() NOT NULL,
    times integer DEFAULT 1 NOT NULL,
    first_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT refusal_times_check CHECK ((times > 0))
);

ALTER TABLE inventory.refusal OWNER TO mesh_inventory;

--
-- Name: TABLE refusal; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.refusal IS 'The last declaration each host refused, as it said it, with how many times in a row; the audit history keeps each refusal once, when first said.';

--
-- Name: COLUMN refusal.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal.node IS 'The host that refused.';

--
-- Name: COLUMN refusal.serial; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal.serial IS 'The serial it refused, when it could read one.';

--
-- Name: COLUMN refusal.fault; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal.fault IS 'forged (another key, mesh or node), malformed (not of its form), replayed (the mesh''s own, not newer than the one applied) or stale (expired on arrival).';

--
-- Name: COLUMN refusal.reason; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal.reason IS 'What the host said, in full.';

--
-- Name: COLUMN refusal.refused_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal.refused_at IS 'When the host last said it.';

--
-- Name: COLUMN refusal.times; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal.times IS 'How many times the host said a refusal of this kind within bounds_setting.fold_refusals of the first (1: new, and kept by the history), whatever the reason or serial.';

--
-- Name: COLUMN refusal.first_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal.first_at IS 'When the host first said a refusal of this kind in the window.';

--
-- Name: report; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.report (
    node text NOT NULL,
    serial bigint NOT NULL,
    held jsonb NOT NULL,
    failed jsonb DEFAULT '[]'::jsonb NOT NULL,
    reported_at timestamp with time zone DEFAULT now() NOT NULL,
    holds_until timestamp with time zone,
    CONSTRAINT report_failed_check CHECK ((jsonb_typeof(failed) = 'array'::text)),
    CONSTRAINT report_held_check CHECK ((jsonb_typeof(held) = 'array'::text))
);

ALTER TABLE inventory.report OWNER TO mesh_inventory;

--
-- Name: TABLE report; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.report IS 'The last account each node gave of what it holds: a backup copy for a rebuilt node, never a source (R2).';

--
-- Name: COLUMN report.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.report.node IS 'Whose account.';

--
-- Name: COLUMN report.serial; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.report.serial IS 'The declaration serial the account was given against.';

--
-- Name: COLUMN report.held; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.report.held IS 'What it holds: [{id, kind, target, origin, digest}]. An empty array means it reported nothing; no row means it never reported.';

--
-- Name: COLUMN report.failed; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.report.failed IS 'Resources it could not apply, with the reason.';

--
-- Name: COLUMN report.reported_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.report.reported_at IS 'When the account arrived: its age goes with every answer.';

--
-- Name: COLUMN report.holds_until; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.report.holds_until IS 'Until when the declaration the node reported holding is valid (its signed expiry); past it, the node is stale.';

--
-- Name: agent_versions; Type: VIEW; Schema: inventory; Owner: mesh_inventory
--

CREATE VIEW inventory.agent_versions AS
 WITH k AS (
         SELECT s.control_version,
            s.minors_behind,
            inventory.version_parts(s.control_version) AS c
           FROM inventory.agent_skew s
        ), v AS (
         SELECT n.name,
            n.agent_version,
            n.agent_version_at,
            k.control_version,
            k.minors_behind,
            k.c,
            inventory.version_parts(n.agent_version) AS a,
            ((EXISTS ( SELECT 1
                   FROM inventory.report r
                  WHERE (r.node = n.name))) OR (EXISTS ( SELECT 1
                   FROM inventory.apply_failure f
                  WHERE (f.node = n.name))) OR (EXISTS ( SELECT 1
                   FROM inventory.refusal x
                  WHERE (x.node = n.name)))) AS has_reported
           FROM (inventory.node n
             CROSS JOIN k)
        ), j AS (
         SELECT v.name,
            v.agent_version,
            v.agent_version_at,
            v.control_version,
            v.minors_behind,
            v.c,
            v.a,
            v.has_reported,
                CASE
                    WHEN ((v.a IS NULL) OR (v.c IS NULL)) THEN NULL::boolean
                    ELSE ((v.a[1] = v.c[1]) AND (v.a[2] <= v.c[2]) AND (v.a[2] >= (v.c[2] - v.minors_behind)))
                END AS speaks,
                CASE
                    WHEN ((v.a IS NULL) OR (v.c IS NULL)) THEN NULL::boolean
                    ELSE (v.a < v.c)
                END AS behind
           FROM v
        )
 SELECT j.name,
    j.agent_version,
    j.agent_version_at,
    j.control_version,
    j.speaks,
    j.behind,
    COALESCE(((NOT j.speaks) OR j.behind), ((j.agent_version IS NULL) AND j.has_reported)) AS outdated,
        CASE
            WHEN ((j.agent_version IS NULL) AND j.has_reported) THEN 'reports no version: its agent is older than version reports'::text
            WHEN (j.agent_version IS NULL) THEN 'has not reported yet'::text
            WHEN (j.control_version IS NULL) THEN 'no control plane has stated its version (mesh serve does as it starts)'::text
            WHEN (NOT j.speaks) THEN format('outside the skew rule: the control plane %s speaks with %s.%s to %s.%s'::text, j.control_version, j.c[1], GREATEST((j.c[2] - j.minors_behind), 0), j.c[1], j.c[2])
            WHEN j.behind THEN format('behind the control plane %s'::text, j.control_version)
            ELSE 'current'::text
        END AS why
   FROM j;

ALTER TABLE inventory.agent_versions OWNER TO mesh_inventory;

--
-- Name: VIEW agent_versions; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON VIEW inventory.agent_versions IS 'One row a node: the agent version it reported, the control plane''s, whether the skew rule lets them speak (speaks), whether the agent is older (behind), and outdated (outside the rule, behind, or reporting no version). mesh node list --outdated prints the outdated rows.';

--
-- Name: answered; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.answered (
    node text NOT NULL,
    kind text NOT NULL,
    answer text NOT NULL,
    answered_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT answered_kind_check CHECK ((kind = ANY (ARRAY['recover'::text, 'rekey'::text])))
);

ALTER TABLE inventory.answered OWNER TO mesh_inventory;

--
-- Name: TABLE answered; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.answered IS 'What each node was last answered to a recover or a rekey, and when: the same answer is given again only after bounds_setting.answer_every.';

--
-- Name: COLUMN answered.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.answered.node IS 'The node answered.';

--
-- Name: COLUMN answered.kind; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.answered.kind IS 'recover or rekey.';

--
-- Name: COLUMN answered.answer; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.answered.answer IS 'A digest of what it was answered (the declaration and report handed back, the key recorded).';

--
-- Name: COLUMN answered.answered_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.answered.answered_at IS 'When it was last answered.';

--
-- Name: bounds_setting; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.bounds_setting (
    one boolean DEFAULT true NOT NULL,
    answer_every interval DEFAULT '00:00:15'::interval NOT NULL,
    letters_kept integer DEFAULT 16 NOT NULL,
    fold_refusals interval DEFAULT '01:00:00'::interval NOT NULL,
    CONSTRAINT bounds_setting_answer_every_check CHECK ((answer_every >= '00:00:00'::interval)),
    CONSTRAINT bounds_setting_fold_refusals_check CHECK ((fold_refusals >= '00:00:00'::interval)),
    CONSTRAINT bounds_setting_letters_kept_check CHECK ((letters_kept > 0)),
    CONSTRAINT bounds_setting_one_check CHECK (one)
);

ALTER TABLE inventory.bounds_setting OWNER TO mesh_inventory;

--
-- Name: TABLE bounds_setting; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.bounds_setting IS 'One row: what one node may make the control plane answer, keep or retry (P2).';

--
-- Name: COLUMN bounds_setting.one; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.bounds_setting.one IS 'There is exactly one row.';

--
-- Name: COLUMN bounds_setting.answer_every; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.bounds_setting.answer_every IS 'A recover or rekey is answered at most once per node within this; one asked again sooner is refused (MSHS3).';

--
-- Name: COLUMN bounds_setting.letters_kept; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.bounds_setting.letters_kept IS 'Messages set aside kept per node (inventory.dead_letter): the newest; older ones go.';

--
-- Name: COLUMN bounds_setting.fold_refusals; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.bounds_setting.fold_refusals IS 'A refusal of a kind the node said within this is counted on its row, not kept again (nor in the history).';

--
-- Name: broker; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.broker (
    address text NOT NULL,
    fingerprint text NOT NULL,
    node text,
    added_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT broker_address_check CHECK (
CASE
    WHEN (address ~ '^[A-Za-z0-9.-]{1,253}:[0-9]{1,5}$'::text) THEN (((split_part(address, ':'::text, 2))::integer >= 1) AND ((split_part(address, ':'::text, 2))::integer <= 65535))
    ELSE false
END),
    CONSTRAINT broker_fingerprint_check CHECK ((fingerprint ~ '^([0-9A-F]{2}:){31}[0-9A-F]{2}$'::text))
);

ALTER TABLE inventory.broker OWNER TO mesh_inventory;

--
-- Name: TABLE broker; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.broker IS 'The broker nodes hosts may dial, tried in turn (address order is the declared order). Empty: the only broker is the home''s (broker.json public and fingerprint).';

--
-- Name: COLUMN broker.address; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.broker.address IS 'HOST:PORT a node dials over TLS (AMQPS).';

--
-- Name: COLUMN broker.fingerprint; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.broker.fingerprint IS 'SHA-256 of the broker node''s certificate as Node''s X509Certificate.fingerprint256 prints it (upper-case hex pairs joined by colons); hosts pin it.';

--
-- Name: COLUMN broker.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.broker.node IS 'The mesh node that runs this broker node, if any (its firewall admits the other broker nodes); null when the broker runs outside the mesh or on a retired node.';

--
-- Name: COLUMN broker.added_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.broker.added_at IS 'When it was first recorded.';

--
-- Name: broker_nodes; Type: VIEW; Schema: inventory; Owner: mesh_inventory
--

CREATE VIEW inventory.broker_nodes AS
 SELECT broker.address,
    broker.fingerprint,
    broker.node
   FROM inventory.broker;

ALTER TABLE inventory.broker_nodes OWNER TO mesh_inventory;

--
-- Name: VIEW broker_nodes; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON VIEW inventory.broker_nodes IS 'The brokers hosts may dial with the fingerprints they pin, and the mesh node running each (null: outside the mesh). Empty: the home''s broker is the only one and nothing is declared about brokers.';

--
-- Name: COLUMN broker_nodes.address; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.broker_nodes.address IS 'HOST:PORT nodes dial (TLS).';

--
-- Name: COLUMN broker_nodes.fingerprint; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.broker_nodes.fingerprint IS 'The SHA-256 fingerprint of its certificate, which every node pins.';

--
-- Name: COLUMN broker_nodes.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.broker_nodes.node IS 'The mesh node running it; null for a broker outside the mesh.';

--
-- Name: chunk_handed; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.chunk_handed (
    node text NOT NULL,
    sha256 text NOT NULL,
    n integer NOT NULL,
    handed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT chunk_handed_n_check CHECK ((n >= 0))
);

ALTER TABLE inventory.chunk_handed OWNER TO mesh_inventory;

--
-- Name: TABLE chunk_handed; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.chunk_handed IS 'Which chunks of which agent package each node was handed, and when: each is handed again only after bounds_setting.answer_every (P2).';

--
-- Name: COLUMN chunk_handed.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.chunk_handed.node IS 'The node handed the chunk.';

--
-- Name: COLUMN chunk_handed.sha256; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.chunk_handed.sha256 IS 'The package: its hex sha256, as catalogue.agent_package names it.';

--
-- Name: COLUMN chunk_handed.n; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.chunk_handed.n IS 'The chunk, numbered from 0.';

--
-- Name: COLUMN chunk_handed.handed_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.chunk_handed.handed_at IS 'When it was handed (marked as it is taken, before it is read and published).';

--
-- Name: console_session; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.console_session (
    session_hash bytea NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT console_session_check CHECK ((expires_at > started_at)),
    CONSTRAINT console_session_session_hash_check CHECK ((octet_length(session_hash) = 32))
);

ALTER TABLE inventory.console_session OWNER TO mesh_inventory;

--
-- Name: TABLE console_session; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.console_session IS 'Console sessions a spent link opened, stored hashed: the cookie itself is never kept.';

--
-- Name: COLUMN console_session.session_hash; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.console_session.session_hash IS 'sha256 of the session cookie''s value.';

--
-- Name: COLUMN console_session.started_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.console_session.started_at IS 'When the link was spent.';

--
-- Name: COLUMN console_session.expires_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.console_session.expires_at IS 'After this the cookie is refused and a new link is needed.';

--
-- Name: console_token; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.console_token (
    token_hash bytea NOT NULL,
    issued_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    spent_at timestamp with time zone,
    CONSTRAINT console_token_check CHECK ((expires_at > issued_at)),
    CONSTRAINT console_token_token_hash_check CHECK ((octet_length(token_hash) = 32))
);

ALTER TABLE inventory.console_token OWNER TO mesh_inventory;

--
-- Name: TABLE console_token; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.console_token IS 'One-time console sign-in links (mesh console token), stored hashed: the link itself is never kept.';

--
-- Name: COLUMN console_token.token_hash; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.console_token.token_hash IS 'sha256 of the secret in the link.';

--
-- Name: COLUMN console_token.issued_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.console_token.issued_at IS 'When it was issued.';

--
-- Name: COLUMN console_token.expires_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.console_token.expires_at IS 'After this the link signs nobody in.';

--
-- Name: COLUMN console_token.spent_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.console_token.spent_at IS 'When it was spent; set by the one statement that finds it, so a link signs in once.';

--
-- Name: correction; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.correction (
    node text NOT NULL,
    resource text NOT NULL,
    corrected_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE inventory.correction OWNER TO mesh_inventory;

--
-- Name: TABLE correction; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.correction IS 'One row each time a host put a resource back (D6): the count that tells drift that repeats from drift that happened once.';

--
-- Name: COLUMN correction.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.correction.node IS 'The host that put it back.';

--
-- Name: COLUMN correction.resource; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.correction.resource IS 'The resource id it reported corrected (file:/etc/x, service:web, ...).';

--
-- Name: COLUMN correction.corrected_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.correction.corrected_at IS 'When the report saying so arrived.';

--
-- Name: dead_letter; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.dead_letter (
    id bigint NOT NULL,
    node text NOT NULL,
    kind text NOT NULL,
    message_id text,
    reason text NOT NULL,
    tries integer NOT NULL,
    body bytea NOT NULL,
    set_aside_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT dead_letter_tries_check CHECK ((tries > 0))
);

ALTER TABLE inventory.dead_letter OWNER TO mesh_inventory;

--
-- Name: TABLE dead_letter; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.dead_letter IS 'Messages mesh serve could not record after a few tries, set aside with why (P2): never retried by serve; read inventory.dead_letters.';

--
-- Name: COLUMN dead_letter.id; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letter.id IS 'Its number, in the order set aside.';

--
-- Name: COLUMN dead_letter.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letter.node IS 'The node (or builder) account that sent it, without the broker prefix.';

--
-- Name: COLUMN dead_letter.kind; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letter.kind IS 'Its routing key: report, recover, rekey, enrol, build.result.';

--
-- Name: COLUMN dead_letter.message_id; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letter.message_id IS 'The message id its sender gave, if any.';

--
-- Name: COLUMN dead_letter.reason; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letter.reason IS 'Why the last try failed, as the store or serve said it.';

--
-- Name: COLUMN dead_letter.tries; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letter.tries IS 'How many times serve tried before setting it aside.';

--
-- Name: COLUMN dead_letter.body; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letter.body IS 'The message as it came, to read or send again by hand.';

--
-- Name: COLUMN dead_letter.set_aside_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letter.set_aside_at IS 'When it was set aside.';

--
-- Name: dead_letter_id_seq; Type: SEQUENCE; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE inventory.dead_letter ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME inventory.dead_letter_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

--
-- Name: dead_letters; Type: VIEW; Schema: inventory; Owner: mesh_inventory
--

CREATE VIEW inventory.dead_letters AS
 SELECT d.id,
    d.node,
    d.kind,
    d.message_id,
    d.reason,
    d.tries,
    octet_length(d.body) AS bytes,
    d.set_aside_at
   FROM inventory.dead_letter d;

ALTER TABLE inventory.dead_letters OWNER TO mesh_inventory;

--
-- Name: VIEW dead_letters; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON VIEW inventory.dead_letters IS 'What mesh serve set aside, newest last: a message it could not record after a few tries, with why (P2).';

--
-- Name: COLUMN dead_letters.id; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letters.id IS 'Its number, in the order set aside.';

--
-- Name: COLUMN dead_letters.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letters.node IS 'The account that sent it, without the broker prefix.';

--
-- Name: COLUMN dead_letters.kind; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letters.kind IS 'Its routing key.';

--
-- Name: COLUMN dead_letters.message_id; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letters.message_id IS 'The message id its sender gave, if any.';

--
-- Name: COLUMN dead_letters.reason; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letters.reason IS 'Why the last try failed.';

--
-- Name: COLUMN dead_letters.tries; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letters.tries IS 'How many tries before it was set aside.';

--
-- Name: COLUMN dead_letters.bytes; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letters.bytes IS 'Its size; the message itself is inventory.dead_letter.body.';

--
-- Name: COLUMN dead_letters.set_aside_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.dead_letters.set_aside_at IS 'When it was set aside.';

--
-- Name: drift_setting; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.drift_setting (
    one boolean DEFAULT true NOT NULL,
    fighting_after integer DEFAULT 3 NOT NULL,
    kept_for interval DEFAULT '1 day'::interval NOT NULL,
    CONSTRAINT drift_setting_fighting_after_check CHECK ((fighting_after > 0)),
    CONSTRAINT drift_setting_kept_for_check CHECK ((kept_for >= '01:00:00'::interval)),
    CONSTRAINT drift_setting_one_check CHECK (one)
);

ALTER TABLE inventory.drift_setting OWNER TO mesh_inventory;

--
-- Name: TABLE drift_setting; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.drift_setting IS 'One row: when repeated drift is flagged.';

--
-- Name: COLUMN drift_setting.one; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.drift_setting.one IS 'There is exactly one row.';

--
-- Name: COLUMN drift_setting.fighting_after; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.drift_setting.fighting_after IS 'A resource put back more than this many times within an hour is fighting something on the machine.';

--
-- Name: COLUMN drift_setting.kept_for; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.drift_setting.kept_for IS 'Corrections older than this are pruned when the node next reports one (at least an hour: fighting counts the last hour).';

--
-- Name: drift; Type: VIEW; Schema: inventory; Owner: mesh_inventory
--

CREATE VIEW inventory.drift AS
 SELECT c.node,
    c.resource,
    (count(*) FILTER (WHERE (c.corrected_at > (now() - '01:00:00'::interval))))::integer AS last_hour,
    (count(*))::integer AS times,
    max(c.corrected_at) AS last_at,
    (count(*) FILTER (WHERE (c.corrected_at > (now() - '01:00:00'::interval))) > s.fighting_after) AS fighting,
    s.fighting_after
   FROM (inventory.correction c
     CROSS JOIN inventory.drift_setting s)
  GROUP BY c.node, c.resource, s.fighting_after;

ALTER TABLE inventory.drift OWNER TO mesh_inventory;

--
-- Name: VIEW drift; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON VIEW inventory.drift IS 'Each resource a host put back: times in the last hour, in all, last at, and fighting (more than drift_setting.fighting_after in the last hour: something on the machine keeps changing it).';

--
-- Name: COLUMN drift.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.drift.node IS 'The node whose host put the resource back.';

--
-- Name: COLUMN drift.resource; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.drift.resource IS 'The resource put back, as kind:name (file:/etc/app.conf, service:app).';

--
-- Name: COLUMN drift.last_hour; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.drift.last_hour IS 'How often in the last hour.';

--
-- Name: COLUMN drift.times; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.drift.times IS 'How often within drift_setting.kept_for (older corrections are pruned).';

--
-- Name: COLUMN drift.last_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.drift.last_at IS 'When it was last put back.';

--
-- Name: COLUMN drift.fighting; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.drift.fighting IS 'Put back more than fighting_after times in the last hour: something on the machine keeps changing it.';

--
-- Name: COLUMN drift.fighting_after; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.drift.fighting_after IS 'The setting (mesh drift fighting-after N, default 3).';

--
-- Name: migration_digest; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.migration_digest (
    name text NOT NULL,
    sha256 text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE inventory.migration_digest OWNER TO mesh_inventory;

--
-- Name: TABLE migration_digest; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.migration_digest IS 'sha256 of each migration file as it ran; an edited file is refused (M1)';

--
-- Name: node_agent_version; Type: VIEW; Schema: inventory; Owner: mesh_inventory
--

CREATE VIEW inventory.node_agent_version AS
 SELECT n.name,
    n.agent_version
   FROM inventory.node n
  WHERE (n.agent_version IS NOT NULL);

ALTER TABLE inventory.node_agent_version OWNER TO mesh_inventory;

--
-- Name: VIEW node_agent_version; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON VIEW inventory.node_agent_version IS 'Each node whose reports named its agent''s version, and that version: what assignment reads to declare a node only what its agent applies.';

--
-- Name: wedge_setting; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.wedge_setting (
    one boolean DEFAULT true NOT NULL,
    after_seconds integer DEFAULT 300 NOT NULL,
    CONSTRAINT wedge_setting_after_seconds_check CHECK ((after_seconds > 0)),
    CONSTRAINT wedge_setting_one_check CHECK (one)
);

ALTER TABLE inventory.wedge_setting OWNER TO mesh_inventory;

--
-- Name: TABLE wedge_setting; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.wedge_setting IS 'One row: how long a node that is here may leave a delivered declaration unapplied before it reads wedged.';

--
-- Name: COLUMN wedge_setting.one; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.wedge_setting.one IS 'There is exactly one row.';

--
-- Name: COLUMN wedge_setting.after_seconds; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.wedge_setting.after_seconds IS 'Seconds a delivered declaration may wait on a node that is here, counted from the later of the delivery and its return.';

--
-- Name: node_status; Type: VIEW; Schema: inventory; Owner: mesh_inventory
--

CREATE VIEW inventory.node_status AS
 SELECT n.name,
    n.site,
    n.dialable,
        CASE
            WHEN (n.last_seen IS NULL) THEN 'never spoken'::text
            WHEN (((now() - n.last_seen) <= '00:02:30'::interval) AND (d.serial > GREATEST(COALESCE(r.serial, (0)::bigint), COALESCE(f.serial, (0)::bigint), COALESCE(x.serial, (0)::bigint))) AND (GREATEST(d.delivered_at, n.here_since) <= (now() - make_interval(secs => (( SELECT w.after_seconds
               FROM inventory.wedge_setting w))::double precision)))) THEN 'wedged'::text
            WHEN ((now() - n.last_seen) <= '00:02:30'::interval) THEN 'here'::text
            ELSE ('out of touch '::text || inventory.describe_age((now() - n.last_seen)))
        END AS state,
    n.last_seen,
    (now() - n.last_seen) AS silent_for,
    n.enrolled_at,
    r.serial AS reported_serial,
        CASE
            WHEN (r.node IS NULL) THEN NULL::integer
            ELSE jsonb_array_length(r.held)
        END AS holds,
        CASE
            WHEN ((r.node IS NULL) AND (f.node IS NULL)) THEN NULL::integer
            ELSE COALESCE(jsonb_array_length(f.failed), 0)
        END AS failing,
    r.reported_at,
    (now() - r.reported_at) AS report_age,
    COALESCE((r.holds_until <= now()), false) AS stale,
    r.holds_until,
    d.serial AS delivered_serial,
    n.agent_version
   FROM ((((inventory.node n
     LEFT JOIN inventory.report r ON ((r.node = n.name)))
     LEFT JOIN inventory.apply_failure f ON ((f.node = n.name)))
     LEFT JOIN inventory.refusal x ON ((x.node = n.name)))
     LEFT JOIN inventory.delivered_declarations() d(node, serial, delivered_at) ON ((d.node = n.name)));

ALTER TABLE inventory.node_status OWNER TO mesh_inventory;

--
-- Name: VIEW node_status; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON VIEW inventory.node_status IS 'One row a node: here / wedged / out of touch Nm / never spoken, the age of its last report (R2, R4), how many resources its last apply could not finish (failing), whether the declaration it holds has expired (stale), the newest declaration delivered to its queue, and the agent version it reported. Wedged: here, but a delivered declaration has waited unapplied (not reported applied, failed or refused) longer than wedge_setting allows.';

--
-- Name: COLUMN node_status.name; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.name IS 'The node''s name: also its broker account and queue.';

--
-- Name: COLUMN node_status.site; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.site IS 'Where it is; nodes at one site may reach each other directly.';

--
-- Name: COLUMN node_status.dialable; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.dialable IS 'host:port others dial for its overlay; null behind NAT.';

--
-- Name: COLUMN node_status.state; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.state IS 'here (heard within 150 s), out of touch Nm (silent that long), or never spoken: what mesh node list prints.';

--
-- Name: COLUMN node_status.last_seen; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.last_seen IS 'When anything was last heard from it: a heard, a report or a refusal.';

--
-- Name: COLUMN node_status.silent_for; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.silent_for IS 'How long since last_seen; null if never spoken.';

--
-- Name: COLUMN node_status.enrolled_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.enrolled_at IS 'When its token was spent; null while a token is issued and not yet spent.';

--
-- Name: COLUMN node_status.reported_serial; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.reported_serial IS 'The declaration serial its last report said it applied; null if it never reported.';

--
-- Name: COLUMN node_status.holds; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.holds IS 'How many resources its last report said it holds; null if it never reported (0 is a report of nothing held).';

--
-- Name: COLUMN node_status.failing; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.failing IS 'How many resources its last apply could not finish; 0 when the last apply was clean, null if it never reported.';

--
-- Name: COLUMN node_status.reported_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.reported_at IS 'When its last report was recorded.';

--
-- Name: COLUMN node_status.report_age; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.report_age IS 'How old its last report is.';

--
-- Name: COLUMN node_status.stale; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.stale IS 'True when the declaration it holds has expired (it reports holds_until): the node keeps it applied but the control plane has not re-signed it in time.';

--
-- Name: COLUMN node_status.holds_until; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.node_status.holds_until IS 'Until when the declaration it holds was signed to hold.';

--
-- Name: package_state; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.package_state (
    node text NOT NULL,
    digest text NOT NULL,
    packages integer NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT package_state_digest_check CHECK ((digest ~ '^[0-9a-f]{64}$'::text))
);

ALTER TABLE inventory.package_state OWNER TO mesh_inventory;

--
-- Name: TABLE package_state; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.package_state IS 'What the mesh holds of each node''s package list: its digest, which a node''s next change names as its base.';

--
-- Name: COLUMN package_state.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.package_state.node IS 'The node.';

--
-- Name: COLUMN package_state.digest; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.package_state.digest IS 'sha256 hex of the list held (inventory.packages_digest): a change sent against another base is not applied.';

--
-- Name: COLUMN package_state.packages; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.package_state.packages IS 'How many packages the list holds.';

--
-- Name: COLUMN package_state.changed_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.package_state.changed_at IS 'When the list last changed.';

--
-- Name: path_end; Type: VIEW; Schema: inventory; Owner: mesh_inventory
--

CREATE VIEW inventory.path_end AS
 SELECT s.name,
    s.state,
    s.stale,
    COALESCE(s.failing, 0) AS failing,
    s.reported_serial,
    n.overlay_key_at
   FROM (inventory.node_status s
     JOIN inventory.node n ON ((n.name = s.name)))
  WHERE (n.enrolled_at IS NOT NULL);

ALTER TABLE inventory.path_end OWNER TO mesh_inventory;

--
-- Name: VIEW path_end; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON VIEW inventory.path_end IS 'Each enrolled node as a path through it needs it: state (here, wedged, out of touch, never spoken), stale, failing (resources its last apply could not finish), the serial it last reported applied, and when its overlay key last changed (Q2).';

--
-- Name: COLUMN path_end.name; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.path_end.name IS 'The node.';

--
-- Name: COLUMN path_end.state; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.path_end.state IS 'here, wedged, out of touch Nm, or never spoken (inventory.node_status).';

--
-- Name: COLUMN path_end.stale; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.path_end.stale IS 'The declaration it holds has expired (C2).';

--
-- Name: COLUMN path_end.failing; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.path_end.failing IS 'Resources its last apply could not finish.';

--
-- Name: COLUMN path_end.reported_serial; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.path_end.reported_serial IS 'The serial it last reported applied; null: never reported.';

--
-- Name: COLUMN path_end.overlay_key_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.path_end.overlay_key_at IS 'When its overlay key last changed; null: never since enrolment.';

--
-- Name: pgmigrations; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.pgmigrations (
    id integer NOT NULL,
    name character varying(255) NOT NULL,
    run_on timestamp without time zone NOT NULL
);

ALTER TABLE inventory.pgmigrations OWNER TO mesh_inventory;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE; Schema: inventory; Owner: mesh_inventory
--

CREATE SEQUENCE inventory.pgmigrations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER TABLE inventory.pgmigrations_id_seq OWNER TO mesh_inventory;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE OWNED BY; Schema: inventory; Owner: mesh_inventory
--

ALTER SEQUENCE inventory.pgmigrations_id_seq OWNED BY inventory.pgmigrations.id;

--
-- Name: refusal_said; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.refusal_said (
    node text NOT NULL,
    fault text NOT NULL,
    since timestamp with time zone DEFAULT now() NOT NULL,
    times integer DEFAULT 1 NOT NULL,
    CONSTRAINT refusal_said_times_check CHECK ((times > 0))
);

ALTER TABLE inventory.refusal_said OWNER TO mesh_inventory;

--
-- Name: TABLE refusal_said; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.refusal_said IS 'Each kind of refusal each node said, since when and how often within bounds_setting.fold_refusals: the fold that keeps the history to one row per node and kind per window.';

--
-- Name: COLUMN refusal_said.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal_said.node IS 'The host that refused.';

--
-- Name: COLUMN refusal_said.fault; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal_said.fault IS 'The kind: forged, malformed, replayed or stale.';

--
-- Name: COLUMN refusal_said.since; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal_said.since IS 'When the window began: the refusal of this kind the history kept.';

--
-- Name: COLUMN refusal_said.times; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.refusal_said.times IS 'How many of this kind since then (1: the one the history kept).';

--
-- Name: report_received; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.report_received (
    message_id text NOT NULL,
    node text NOT NULL,
    serial bigint,
    received_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE inventory.report_received OWNER TO mesh_inventory;

--
-- Name: TABLE report_received; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.report_received IS 'Each report message recorded, by its broker message id: a redelivery is recognised and recorded no second time. A node''s rows older than a day are removed as it reports.';

--
-- Name: COLUMN report_received.message_id; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.report_received.message_id IS 'The message id the host published the report with (host/agent.ts).';

--
-- Name: COLUMN report_received.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.report_received.node IS 'The node whose report it was.';

--
-- Name: COLUMN report_received.serial; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.report_received.serial IS 'The declaration the report was about (null for a report of nothing applied yet).';

--
-- Name: COLUMN report_received.received_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.report_received.received_at IS 'When it was first recorded.';

--
-- Name: token; Type: TABLE; Schema: inventory; Owner: mesh_inventory
--

CREATE TABLE inventory.token (
    token_hash bytea NOT NULL,
    node text NOT NULL,
    issued_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    spent_at timestamp with time zone,
    spent_by bytea,
    CONSTRAINT token_spent_by_check CHECK ((octet_length(spent_by) = 32)),
    CONSTRAINT token_token_hash_check CHECK ((octet_length(token_hash) = 32))
);

ALTER TABLE inventory.token OWNER TO mesh_inventory;

--
-- Name: TABLE token; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON TABLE inventory.token IS 'One-time enrolment tokens, stored hashed (E1): the secret itself is the node''s first broker password and is never kept.';

--
-- Name: COLUMN token.token_hash; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.token.token_hash IS 'sha256 of the token secret.';

--
-- Name: COLUMN token.node; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.token.node IS 'The one node this token enrols.';

--
-- Name: COLUMN token.issued_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.token.issued_at IS 'When it was issued.';

--
-- Name: COLUMN token.expires_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.token.expires_at IS 'After this it cannot be spent.';

--
-- Name: COLUMN token.spent_at; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.token.spent_at IS 'When it was spent; set by the one statement that finds it (E1).';

--
-- Name: COLUMN token.spent_by; Type: COMMENT; Schema: inventory; Owner: mesh_inventory
--

COMMENT ON COLUMN inventory.token.spent_by IS 'The identity key that spent it, so a redelivered request from the same node is answered again rather than refused.';

--
-- Name: address; Type: TABLE; Schema: overlay; Owner: mesh_overlay
--

CREATE TABLE "overlay".address (
    node text NOT NULL,
    address inet NOT NULL,
    allocated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT address_address_check CHECK ((masklen(address) = 32))
);

ALTER TABLE "overlay".address OWNER TO mesh_overlay;

--
-- Name: TABLE address; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON TABLE "overlay".address IS 'One overlay address a node: unique, and never handed to another node while its holder is enrolled.';

--
-- Name: COLUMN address.node; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".address.node IS 'The inventory node holding it.';

--
-- Name: COLUMN address.address; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".address.address IS 'A host address (/32) inside overlay.settings.network.';

--
-- Name: COLUMN address.allocated_at; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".address.allocated_at IS 'When it was allocated or pinned.';

--
-- Name: firewall_setting; Type: TABLE; Schema: overlay; Owner: mesh_overlay
--

CREATE TABLE "overlay".firewall_setting (
    one boolean DEFAULT true NOT NULL,
    ssh_port integer DEFAULT 22 NOT NULL,
    epmd_port integer DEFAULT 4373 NOT NULL,
    dist_port integer DEFAULT 25673 NOT NULL,
    CONSTRAINT firewall_setting_dist_port_check CHECK (((dist_port >= 1) AND (dist_port <= 65535))),
    CONSTRAINT firewall_setting_epmd_port_check CHECK (((epmd_port >= 1) AND (epmd_port <= 65535))),
    CONSTRAINT firewall_setting_one_check CHECK (one),
    CONSTRAINT firewall_setting_ssh_port_check CHECK (((ssh_port >= 1) AND (ssh_port <= 65535)))
);

ALTER TABLE "overlay".firewall_setting OWNER TO mesh_overlay;

--
-- Name: TABLE firewall_setting; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON TABLE "overlay".firewall_setting IS 'Firewall facts of this mesh: one row.';

--
-- Name: COLUMN firewall_setting.one; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".firewall_setting.one IS 'Always true: there is one row.';

--
-- Name: COLUMN firewall_setting.ssh_port; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".firewall_setting.ssh_port IS 'The ssh port every node''s firewall keeps open, so an operator over ssh is never locked out (X1). The first-node bundle sets it from --ssh-port.';

--
-- Name: COLUMN firewall_setting.epmd_port; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".firewall_setting.epmd_port IS 'The port epmd listens on, on every broker node''s overlay address (the bundle''s --epmd-port; 4373, not 4369, so it never meets a distribution''s own epmd). Admitted from the other broker nodes alone.';

--
-- Name: COLUMN firewall_setting.dist_port; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".firewall_setting.dist_port IS 'The Erlang distribution port of every broker node (the bundle''s --dist-port), on its overlay address. Admitted from the other broker nodes alone.';

--
-- Name: hub; Type: TABLE; Schema: overlay; Owner: mesh_overlay
--

CREATE TABLE "overlay".hub (
    node text NOT NULL,
    named_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE "overlay".hub OWNER TO mesh_overlay;

--
-- Name: TABLE hub; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON TABLE "overlay".hub IS 'Nodes that forward between spokes (O1, O2). Every other node peers with every hub.';

--
-- Name: COLUMN hub.node; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".hub.node IS 'The inventory node that is a hub.';

--
-- Name: COLUMN hub.named_at; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".hub.named_at IS 'When the operator named it a hub.';

--
-- Name: member; Type: VIEW; Schema: overlay; Owner: mesh_overlay
--

CREATE VIEW "overlay".member AS
 SELECT e.name,
    e.site,
    e.dialable,
    encode(e.overlay_key, 'base64'::text) AS public_key,
    a.address,
    ((EXISTS ( SELECT 1
           FROM "overlay".hub h
          WHERE (h.node = e.name))) AND (e.dialable IS NOT NULL)) AS hub
   FROM (inventory.enrolled_node e
     JOIN "overlay".address a ON ((a.node = e.name)));

ALTER TABLE "overlay".member OWNER TO mesh_overlay;

--
-- Name: VIEW member; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON VIEW "overlay".member IS 'Enrolled nodes with an overlay address; hub only while it is also dialable.';

--
-- Name: COLUMN member.name; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".member.name IS 'The node.';

--
-- Name: COLUMN member.site; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".member.site IS 'Its site.';

--
-- Name: COLUMN member.dialable; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".member.dialable IS 'host:port others dial; null behind NAT.';

--
-- Name: COLUMN member.public_key; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".member.public_key IS 'Its WireGuard public key, base64.';

--
-- Name: COLUMN member.address; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".member.address IS 'Its overlay address.';

--
-- Name: COLUMN member.hub; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".member.hub IS 'A hub: the spokes of its group peer with it, and it forwards between them and to the other hubs (O4).';

--
-- Name: migration_digest; Type: TABLE; Schema: overlay; Owner: mesh_overlay
--

CREATE TABLE "overlay".migration_digest (
    name text NOT NULL,
    sha256 text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE "overlay".migration_digest OWNER TO mesh_overlay;

--
-- Name: TABLE migration_digest; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON TABLE "overlay".migration_digest IS 'sha256 of each migration file as it ran; an edited file is refused (M1)';

--
-- Name: node_resources; Type: VIEW; Schema: overlay; Owner: mesh_overlay
--

CREATE VIEW "overlay".node_resources AS
 SELECT node_resources_of.node,
    node_resources_of.resource
   FROM "overlay".node_resources_of(NULL::text[]) node_resources_of(node, resource);

ALTER TABLE "overlay".node_resources OWNER TO mesh_overlay;

--
-- Name: VIEW node_resources; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON VIEW "overlay".node_resources IS 'The wireguard resource of each node that has a peer: address, listen port when dialable, hub flag, peers sorted by key.';

--
-- Name: peering; Type: VIEW; Schema: overlay; Owner: mesh_overlay
--

CREATE VIEW "overlay".peering AS
 SELECT peers.node,
    peers.peer,
    peers.public_key,
    peers.endpoint,
    peers.allowed_ips,
    peers.keepalive,
    peers.route,
    peers.reason
   FROM "overlay".peers() peers(node, peer, public_key, endpoint, allowed_ips, keepalive, route, reason);

ALTER TABLE "overlay".peering OWNER TO mesh_overlay;

--
-- Name: VIEW peering; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON VIEW "overlay".peering IS 'Node N has peer P: its key, endpoint (only where P can be dialled), allowed IPs (the range through its route hub, else P''s /32), keepalive (only when N cannot be dialled), route (P is N''s route hub), reason (hub or site).';

--
-- Name: COLUMN peering.node; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".peering.node IS 'The node whose peer list this row is in.';

--
-- Name: COLUMN peering.peer; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".peering.peer IS 'The peer.';

--
-- Name: COLUMN peering.public_key; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".peering.public_key IS 'The peer''s WireGuard public key; a key appears once in any list.';

--
-- Name: COLUMN peering.endpoint; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".peering.endpoint IS 'Where node dials the peer (its host:port); null when the peer is behind NAT and dials node.';

--
-- Name: COLUMN peering.allowed_ips; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".peering.allowed_ips IS 'The addresses routed to the peer: its own; the whole range through a spoke''s hub; on a hub, another hub''s address and its group''s /20 blocks.';

--
-- Name: COLUMN peering.keepalive; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".peering.keepalive IS 'Seconds between keepalives, set when node sits behind NAT; null otherwise.';

--
-- Name: COLUMN peering.route; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".peering.route IS 'True when this peer is node''s route to the whole overlay range: its hub.';

--
-- Name: COLUMN peering.reason; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".peering.reason IS 'Why the two peer: hub (one of them is a hub) or site (the same site, one of them dialable).';

--
-- Name: pgmigrations; Type: TABLE; Schema: overlay; Owner: mesh_overlay
--

CREATE TABLE "overlay".pgmigrations (
    id integer NOT NULL,
    name character varying(255) NOT NULL,
    run_on timestamp without time zone NOT NULL
);

ALTER TABLE "overlay".pgmigrations OWNER TO mesh_overlay;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE; Schema: overlay; Owner: mesh_overlay
--

CREATE SEQUENCE "overlay".pgmigrations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER TABLE "overlay".pgmigrations_id_seq OWNER TO mesh_overlay;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE OWNED BY; Schema: overlay; Owner: mesh_overlay
--

ALTER SEQUENCE "overlay".pgmigrations_id_seq OWNED BY "overlay".pgmigrations.id;

--
-- Name: settings; Type: TABLE; Schema: overlay; Owner: mesh_overlay
--

CREATE TABLE "overlay".settings (
    one boolean DEFAULT true NOT NULL,
    network cidr DEFAULT '10.99.0.0/16'::cidr NOT NULL,
    listen_port integer DEFAULT 51820 NOT NULL,
    keepalive integer DEFAULT 25 NOT NULL,
    interface text DEFAULT 'mesh0'::text NOT NULL,
    hub_spokes integer DEFAULT 50000 NOT NULL,
    CONSTRAINT settings_hub_spokes_check CHECK (((hub_spokes >= 1) AND (hub_spokes <= 75000))),
    CONSTRAINT settings_interface_check CHECK ((interface ~ '^[a-z][a-z0-9]{0,14}$'::text)),
    CONSTRAINT settings_keepalive_check CHECK (((keepalive >= 1) AND (keepalive <= 3600))),
    CONSTRAINT settings_listen_port_check CHECK (((listen_port >= 1) AND (listen_port <= 65535))),
    CONSTRAINT settings_network_check CHECK (((family((network)::inet) = 4) AND ((masklen((network)::inet) >= 8) AND (masklen((network)::inet) <= 30)))),
    CONSTRAINT settings_one_check CHECK (one)
);

ALTER TABLE "overlay".settings OWNER TO mesh_overlay;

--
-- Name: TABLE settings; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON TABLE "overlay".settings IS 'The overlay of this mesh: one row.';

--
-- Name: COLUMN settings.one; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".settings.one IS 'Always true: there is one overlay.';

--
-- Name: COLUMN settings.network; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".settings.network IS 'The overlay range; every node''s address is in it and a spoke routes all of it through its hub.';

--
-- Name: COLUMN settings.listen_port; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".settings.listen_port IS 'The UDP port a dialable node listens on (its port forward must lead there).';

--
-- Name: COLUMN settings.keepalive; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".settings.keepalive IS 'Seconds between keepalives a node behind NAT sends, so its router keeps the path open for the answers.';

--
-- Name: COLUMN settings.interface; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".settings.interface IS 'The interface name every node raises.';

--
-- Name: COLUMN settings.hub_spokes; Type: COMMENT; Schema: overlay; Owner: mesh_overlay
--

COMMENT ON COLUMN "overlay".settings.hub_spokes IS 'The most spokes one hub holds as peers; over it, hubs divide the spokes between them by address block (O4). At about 106 bytes a peer in the signed envelope, 50,000 keeps a hub''s declaration near 5.3 MB, under the 8 MiB limit with room for its site''s peers.';

--
-- Name: grant; Type: TABLE; Schema: provision; Owner: mesh_provision
--

CREATE TABLE provision."grant" (
    provision text NOT NULL,
    consumer text NOT NULL,
    facts jsonb NOT NULL,
    granted_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT grant_consumer_check CHECK ((consumer ~ '^[a-z][a-z0-9-]{0,62}$'::text)),
    CONSTRAINT grant_facts_check CHECK ((jsonb_typeof(facts) = 'object'::text))
);

ALTER TABLE provision."grant" OWNER TO mesh_provision;

--
-- Name: TABLE "grant"; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON TABLE provision."grant" IS 'Module CONSUMER may use PROVISION: one pair, one credential (S5).';

--
-- Name: COLUMN "grant".provision; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision."grant".provision IS 'What is consumed.';

--
-- Name: COLUMN "grant".consumer; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision."grant".consumer IS 'The catalogue module that consumes it.';

--
-- Name: COLUMN "grant".facts; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision."grant".facts IS 'The pair''s readable facts: for postgres {database, user}; for routes {name, port} (the name served, the port on the consumer).';

--
-- Name: COLUMN "grant".granted_at; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision."grant".granted_at IS 'When it was granted.';

--
-- Name: provision; Type: TABLE; Schema: provision; Owner: mesh_provision
--

CREATE TABLE provision.provision (
    name text NOT NULL,
    kind text NOT NULL,
    provider text NOT NULL,
    facts jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT provision_facts_check CHECK ((jsonb_typeof(facts) = 'object'::text)),
    CONSTRAINT provision_kind_check CHECK ((kind = ANY (ARRAY['postgres'::text, 'route'::text]))),
    CONSTRAINT provision_name_check CHECK ((name ~ '^[a-z][a-z0-9-]{0,62}$'::text)),
    CONSTRAINT provision_provider_check CHECK ((provider ~ '^[a-z][a-z0-9-]{0,62}$'::text))
);

ALTER TABLE provision.provision OWNER TO mesh_provision;

--
-- Name: TABLE provision; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON TABLE provision.provision IS 'Something a module provides: a PostgreSQL database server, or routes through a reverse proxy.';

--
-- Name: COLUMN provision.name; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.provision.name IS 'Its name; files on nodes are named after it.';

--
-- Name: COLUMN provision.kind; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.provision.kind IS 'postgres: a consumer supplies a database name and receives credentials. route: a consumer supplies a target port and receives a name the proxy serves.';

--
-- Name: COLUMN provision.provider; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.provision.provider IS 'The catalogue module that provides it; every node it is assigned to holds every consumer''s credential.';

--
-- Name: COLUMN provision.facts; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.provision.facts IS 'Readable facts the provider states, copied into every binds file: for postgres {host, port}; for routes {} or {scheme}.';

--
-- Name: COLUMN provision.created_at; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.provision.created_at IS 'When it was offered.';

--
-- Name: sealed; Type: TABLE; Schema: secret; Owner: mesh_secret
--

CREATE TABLE secret.sealed (
    secret text NOT NULL,
    holder text NOT NULL,
    sealed_to bytea NOT NULL,
    blob text NOT NULL,
    generation integer NOT NULL,
    CONSTRAINT sealed_blob_check CHECK ((blob ~ '^[A-Za-z0-9+/]+={0,2}$'::text)),
    CONSTRAINT sealed_sealed_to_check CHECK ((octet_length(sealed_to) = 32))
);

ALTER TABLE secret.sealed OWNER TO mesh_secret;

--
-- Name: TABLE sealed; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON TABLE secret.sealed IS 'One sealed copy of a secret per holder (S1). Only the holder''s private sealing key opens it.';

--
-- Name: COLUMN sealed.secret; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.sealed.secret IS 'Which secret.';

--
-- Name: COLUMN sealed.holder; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.sealed.holder IS 'The node that holds it (an inventory node name).';

--
-- Name: COLUMN sealed.sealed_to; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.sealed.sealed_to IS 'The X25519 sealing key it was sealed to. When inventory says the node now has another key, this blob is stale (S3).';

--
-- Name: COLUMN sealed.blob; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.sealed.blob IS 'base64 of version | ephemeral public | nonce | ciphertext | tag (src/crypto/seal.ts).';

--
-- Name: COLUMN sealed.generation; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.sealed.generation IS 'The secret generation this blob carries; every holder of a secret carries the same one.';

--
-- Name: secret; Type: TABLE; Schema: secret; Owner: mesh_secret
--

CREATE TABLE secret.secret (
    name text NOT NULL,
    origin text NOT NULL,
    path text,
    mode text DEFAULT '0600'::text NOT NULL,
    generation integer DEFAULT 1 NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    sealed_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT secret_generation_check CHECK ((generation > 0)),
    CONSTRAINT secret_mode_check CHECK ((mode ~ '^0?[0-7]{3}$'::text)),
    CONSTRAINT secret_name_check CHECK ((name ~ '^[a-z][a-z0-9-]{0,62}(/[a-z][a-z0-9-]{0,62}){0,3}$'::text)),
    CONSTRAINT secret_origin_check CHECK ((origin = ANY (ARRAY['made'::text, 'accepted'::text]))),
    CONSTRAINT secret_path_check CHECK ((path ~ '^/.*[^/]$'::text))
);

ALTER TABLE secret.secret OWNER TO mesh_secret;

--
-- Name: TABLE secret; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON TABLE secret.secret IS 'A secret the mesh holds sealed, never in plaintext. One row a secret; its blobs are in secret.sealed.';

--
-- Name: COLUMN secret.name; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.secret.name IS 'Its name. Provision credentials are named provision/<provision>/<consumer>; others are chosen by the operator.';

--
-- Name: COLUMN secret.origin; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.secret.origin IS 'made: the mesh generated it and nothing else ever knew it, so it may be made again. accepted: some other system was told it (a broker, a database superuser); it is never regenerated (S4).';

--
-- Name: COLUMN secret.path; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.secret.path IS 'Where secret.node_resources places it on each holder; null when another context places it (provision does, under its own paths).';

--
-- Name: COLUMN secret.mode; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.secret.mode IS 'File mode of the placed file.';

--
-- Name: COLUMN secret.generation; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.secret.generation IS 'Goes up each time the value changes (made again, rotated, accepted again). Resealing the same value never happens: the mesh cannot read it.';

--
-- Name: COLUMN secret.created_at; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.secret.created_at IS 'When it was first made or accepted.';

--
-- Name: COLUMN secret.sealed_at; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.secret.sealed_at IS 'When the current value was sealed.';

--
-- Name: held; Type: VIEW; Schema: secret; Owner: mesh_secret
--

CREATE VIEW secret.held AS
 SELECT s.name AS secret,
    s.origin,
    s.generation,
    s.path,
    s.mode,
    b.holder,
    b.blob,
    b.sealed_to,
    ((e.sealing_key IS NOT NULL) AND (e.sealing_key = b.sealed_to)) AS current
   FROM ((secret.secret s
     JOIN secret.sealed b ON ((b.secret = s.name)))
     LEFT JOIN inventory.enrolled_node e ON ((e.name = b.holder)));

ALTER TABLE secret.held OWNER TO mesh_secret;

--
-- Name: VIEW held; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON VIEW secret.held IS 'Each holder''s blob of each secret; current is false when the holder is gone or its sealing key changed (S3), and such a blob is never declared.';

--
-- Name: grant_status; Type: VIEW; Schema: provision; Owner: mesh_provision
--

CREATE VIEW provision.grant_status AS
 SELECT g.provision,
    p.kind,
    p.provider,
    g.consumer,
    g.facts,
    g.granted_at,
    COALESCE(( SELECT array_agg(h.node ORDER BY h.node) AS array_agg
           FROM provision.affected_holders(g.provision, g.consumer) h(node, sides, sealing_key)), '{}'::text[]) AS holders,
    ( SELECT max(s.generation) AS max
           FROM secret.held s
          WHERE (s.secret = provision.secret_of(g.provision, g.consumer))) AS generation,
    r.settled,
    COALESCE(r.waiting_for, '{}'::text[]) AS waiting_for
   FROM ((provision."grant" g
     JOIN provision.provision p ON ((p.name = g.provision)))
     LEFT JOIN provision.settlement(NULL::text[]) r(provision, consumer, secret, generation, holders, settled, waiting_for) ON (((r.provision = g.provision) AND (r.consumer = g.consumer))));

ALTER TABLE provision.grant_status OWNER TO mesh_provision;

--
-- Name: VIEW grant_status; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON VIEW provision.grant_status IS 'Each pair: what, who provides, who consumes, the nodes that hold its credential, its generation (never a value), the generation every holder acknowledged (settled) and who has not acknowledged the newest (waiting_for).';

--
-- Name: COLUMN grant_status.provision; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.grant_status.provision IS 'What is provided.';

--
-- Name: COLUMN grant_status.kind; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.grant_status.kind IS 'postgres (a role and database per pair) or route (a name a reverse proxy serves).';

--
-- Name: COLUMN grant_status.provider; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.grant_status.provider IS 'The module that provides it.';

--
-- Name: COLUMN grant_status.consumer; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.grant_status.consumer IS 'The module granted it.';

--
-- Name: COLUMN grant_status.facts; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.grant_status.facts IS 'The pair''s readable facts: {database, user} for postgres, {name, port} for a route.';

--
-- Name: COLUMN grant_status.granted_at; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.grant_status.granted_at IS 'When it was granted.';

--
-- Name: COLUMN grant_status.holders; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.grant_status.holders IS 'The nodes holding the pair''s credential: every node running either end.';

--
-- Name: COLUMN grant_status.generation; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.grant_status.generation IS 'The newest generation of its credential.';

--
-- Name: COLUMN grant_status.settled; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.grant_status.settled IS 'The newest generation every holder acknowledged.';

--
-- Name: COLUMN grant_status.waiting_for; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.grant_status.waiting_for IS 'Holders that have not yet applied the newest generation: the provider accepts the previous one until none is left.';

--
-- Name: migration_digest; Type: TABLE; Schema: provision; Owner: mesh_provision
--

CREATE TABLE provision.migration_digest (
    name text NOT NULL,
    sha256 text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE provision.migration_digest OWNER TO mesh_provision;

--
-- Name: TABLE migration_digest; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON TABLE provision.migration_digest IS 'sha256 of each migration file as it ran; an edited file is refused (M1)';

--
-- Name: setting; Type: TABLE; Schema: provision; Owner: mesh_provision
--

CREATE TABLE provision.setting (
    only_row boolean DEFAULT true NOT NULL,
    files_root text DEFAULT '/etc/mesh/provision'::text NOT NULL,
    CONSTRAINT setting_files_root_check CHECK ((files_root ~ '^/([A-Za-z0-9._-]+/)*[A-Za-z0-9._-]+$'::text)),
    CONSTRAINT setting_only_row_check CHECK (only_row)
);

ALTER TABLE provision.setting OWNER TO mesh_provision;

--
-- Name: TABLE setting; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON TABLE provision.setting IS 'The one row of this context''s settings.';

--
-- Name: COLUMN setting.only_row; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.setting.only_row IS 'Always true: there is one row.';

--
-- Name: COLUMN setting.files_root; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.setting.files_root IS 'Where binds and secrets are written on every node: <root>/uses/<consumer>/<provision>.{binds,secret} on a consumer, <root>/provides/<provision>/<consumer>.{binds,secret} on a provider. Each host must list it in MESH_HOST_ROOTS.';

--
-- Name: earlier; Type: TABLE; Schema: secret; Owner: mesh_secret
--

CREATE TABLE secret.earlier (
    secret text NOT NULL,
    holder text NOT NULL,
    generation integer NOT NULL,
    sealed_to bytea NOT NULL,
    blob text NOT NULL,
    CONSTRAINT earlier_blob_check CHECK ((blob ~ '^[A-Za-z0-9+/]+={0,2}$'::text)),
    CONSTRAINT earlier_generation_check CHECK ((generation > 0)),
    CONSTRAINT earlier_sealed_to_check CHECK ((octet_length(sealed_to) = 32))
);

ALTER TABLE secret.earlier OWNER TO mesh_secret;

--
-- Name: TABLE earlier; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON TABLE secret.earlier IS 'Sealed copies of generations a rotation replaced, kept until the rotation settled (every holder acknowledged a newer one): the provider accepts them meanwhile.';

--
-- Name: COLUMN earlier.secret; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.earlier.secret IS 'Which secret.';

--
-- Name: COLUMN earlier.holder; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.earlier.holder IS 'The node the copy was sealed to.';

--
-- Name: COLUMN earlier.generation; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.earlier.generation IS 'The generation it carries, older than secret.secret.generation.';

--
-- Name: COLUMN earlier.sealed_to; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.earlier.sealed_to IS 'The sealing key it was sealed to; a holder with another key now cannot open it, and it is never declared.';

--
-- Name: COLUMN earlier.blob; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.earlier.blob IS 'As secret.sealed.blob.';

--
-- Name: held_earlier; Type: VIEW; Schema: secret; Owner: mesh_secret
--

CREATE VIEW secret.held_earlier AS
 SELECT e.secret,
    e.generation,
    e.holder,
    e.blob,
    ((n.sealing_key IS NOT NULL) AND (n.sealing_key = e.sealed_to)) AS current
   FROM (secret.earlier e
     LEFT JOIN inventory.enrolled_node n ON ((n.name = e.holder)));

ALTER TABLE secret.held_earlier OWNER TO mesh_secret;

--
-- Name: VIEW held_earlier; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON VIEW secret.held_earlier IS 'Each kept copy of an earlier generation; current is false when its holder is gone or has another sealing key (such a copy is never declared).';

--
-- Name: node_resources; Type: VIEW; Schema: provision; Owner: mesh_provision
--

CREATE VIEW provision.node_resources AS
 WITH pairs AS (
         SELECT g.provision,
            g.consumer,
            p.kind,
            p.provider,
            provision.secret_of(g.provision, g.consumer) AS secret,
            (g.facts ->> 'user'::text) AS usr,
            ((p.facts || g.facts) || jsonb_build_object('kind', p.kind, 'provision', g.provision, 'consumer', g.consumer)) AS facts
           FROM (provision."grant" g
             JOIN provision.provision p ON ((p.name = g.provision)))
        ), placed AS (
         SELECT pr.provision,
            pr.consumer,
            pr.kind,
            pr.provider,
            pr.secret,
            pr.usr,
            pr.facts,
            pl.node,
            'provider'::text AS side,
            ((((( SELECT setting.files_root
                   FROM provision.setting) || '/provides/'::text) || pr.provision) || '/'::text) || pr.consumer) AS base
           FROM (pairs pr
             JOIN provision.placements() pl(module, node) ON ((pl.module = pr.provider)))
        UNION ALL
         SELECT pr.provision,
            pr.consumer,
            pr.kind,
            pr.provider,
            pr.secret,
            pr.usr,
            pr.facts,
            pl.node,
            'consumer'::text,
            ((((( SELECT setting.files_root
                   FROM provision.setting) || '/uses/'::text) || pr.consumer) || '/'::text) || pr.provision)
           FROM (pairs pr
             JOIN provision.placements() pl(module, node) ON ((pl.module = pr.consumer)))
        ), settling AS (
         SELECT s.secret,
            s.settled
           FROM provision.settlement(ARRAY( SELECT DISTINCT e.secret
                   FROM secret.held_earlier e)) s(provision, consumer, secret, generation, holders, settled, waiting_for)
        ), copies AS (
         SELECT pd.node,
            pd.base,
            h.generation,
            h.blob,
            (pd.base || '.secret'::text) AS path,
            ((pd.usr || '-'::text) || h.generation) AS role
           FROM (placed pd
             JOIN secret.held h ON (((h.secret = pd.secret) AND (h.holder = pd.node) AND h.current)))
          WHERE (pd.kind = 'postgres'::text)
        UNION ALL
         SELECT pd.node,
            pd.base,
            e.generation,
            e.blob,
            (((pd.base || '.'::text) || e.generation) || '.secret'::text),
            ((pd.usr || '-'::text) || e.generation)
           FROM ((placed pd
             JOIN secret.held_earlier e ON (((e.secret = pd.secret) AND (e.holder = pd.node) AND e.current)))
             LEFT JOIN settling st ON ((st.secret = pd.secret)))
          WHERE ((pd.kind = 'postgres'::text) AND (pd.side = 'provider'::text) AND (e.generation >= COALESCE(st.settled, 0)))
        ), binds AS (
         SELECT pd.node,
            pd.base,
                CASE
                    WHEN ((pd.side = 'provider'::text) AND (pd.kind = 'route'::text)) THEN (pd.facts || jsonb_build_object('upstreams', COALESCE(( SELECT jsonb_agg(jsonb_build_object('node', cn.node, 'host', provision.where_is(cn.node)) ORDER BY cn.node) AS jsonb_agg
                       FROM provision.placements() cn(module, node)
                      WHERE (cn.module = pd.consumer)), '[]'::jsonb)))
                    WHEN ((pd.side = 'provider'::text) AND (pd.kind = 'postgres'::text)) THEN (pd.facts || jsonb_build_object('logins', COALESCE(( SELECT jsonb_agg(jsonb_build_object('role', c.role, 'generation', c.generation, 'secret', c.path) ORDER BY c.generation DESC) AS jsonb_agg
                       FROM copies c
                      WHERE ((c.node = pd.node) AND (c.base = pd.base))), '[]'::jsonb)))
                    WHEN (pd.kind = 'postgres'::text) THEN (pd.facts || COALESCE(( SELECT jsonb_build_object('login', c.role) AS jsonb_build_object
                       FROM copies c
                      WHERE ((c.node = pd.node) AND (c.base = pd.base) AND (c.path = (pd.base || '.secret'::text)))), '{}'::jsonb))
                    ELSE pd.facts
                END AS facts
           FROM placed pd
        )
 SELECT b.node,
    jsonb_build_object('id', (('file:'::text || b.base) || '.binds'::text), 'kind', 'file', 'path', (b.base || '.binds'::text), 'mode', '0644', 'content', translate(encode(convert_to(((b.facts)::text || '
'::text), 'utf8'::name), 'base64'::text), '
'::text, ''::text)) AS resource
   FROM binds b
  WHERE (b.facts IS NOT NULL)
UNION ALL
 SELECT c.node,
    jsonb_build_object('id', ('secret:'::text || c.path), 'kind', 'secret', 'path', c.path, 'mode', '0600', 'sealed', c.blob) AS resource
   FROM copies c;

ALTER TABLE provision.node_resources OWNER TO mesh_provision;

--
-- Name: VIEW node_resources; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON VIEW provision.node_resources IS 'Binds and sealed secret files of every pair, on every node running either end (S2); a provider also holds each generation a holder may still use until the rotation settled (S5).';

--
-- Name: pgmigrations; Type: TABLE; Schema: provision; Owner: mesh_provision
--

CREATE TABLE provision.pgmigrations (
    id integer NOT NULL,
    name character varying(255) NOT NULL,
    run_on timestamp without time zone NOT NULL
);

ALTER TABLE provision.pgmigrations OWNER TO mesh_provision;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE; Schema: provision; Owner: mesh_provision
--

CREATE SEQUENCE provision.pgmigrations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER TABLE provision.pgmigrations_id_seq OWNER TO mesh_provision;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE OWNED BY; Schema: provision; Owner: mesh_provision
--

ALTER SEQUENCE provision.pgmigrations_id_seq OWNED BY provision.pgmigrations.id;

--
-- Name: rotation; Type: VIEW; Schema: provision; Owner: mesh_provision
--

CREATE VIEW provision.rotation AS
 SELECT settlement.provision,
    settlement.consumer,
    settlement.secret,
    settlement.generation,
    settlement.holders,
    settlement.settled,
    settlement.waiting_for
   FROM provision.settlement(NULL::text[]) settlement(provision, consumer, secret, generation, holders, settled, waiting_for);

ALTER TABLE provision.rotation OWNER TO mesh_provision;

--
-- Name: VIEW rotation; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON VIEW provision.rotation IS 'Each pair''s rotation: newest generation, holders, the generation every holder acknowledged (settled), and who has not acknowledged the newest (waiting_for). Complete when settled = generation.';

--
-- Name: COLUMN rotation.provision; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.rotation.provision IS 'What is provided.';

--
-- Name: COLUMN rotation.consumer; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.rotation.consumer IS 'The module granted it.';

--
-- Name: COLUMN rotation.secret; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.rotation.secret IS 'The name of the pair''s credential in the secret context.';

--
-- Name: COLUMN rotation.generation; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.rotation.generation IS 'Its newest generation.';

--
-- Name: COLUMN rotation.holders; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.rotation.holders IS 'The nodes holding it.';

--
-- Name: COLUMN rotation.settled; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.rotation.settled IS 'The newest generation every holder acknowledged.';

--
-- Name: COLUMN rotation.waiting_for; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.rotation.waiting_for IS 'Holders still to apply the newest generation.';

--
-- Name: stale_credentials; Type: VIEW; Schema: provision; Owner: mesh_provision
--

CREATE VIEW provision.stale_credentials AS
 SELECT g.provision,
    g.consumer,
    provision.secret_of(g.provision, g.consumer) AS secret,
    array_agg(h.node ORDER BY h.node) AS holders_without_copy
   FROM ((provision."grant" g
     JOIN provision.provision p ON (((p.name = g.provision) AND (p.kind = 'postgres'::text))))
     CROSS JOIN LATERAL provision.affected_holders(g.provision, g.consumer) h(node, sides, sealing_key))
  WHERE (NOT (EXISTS ( SELECT 1
           FROM secret.held s
          WHERE ((s.secret = provision.secret_of(g.provision, g.consumer)) AND (s.holder = h.node) AND s.current))))
  GROUP BY g.provision, g.consumer;

ALTER TABLE provision.stale_credentials OWNER TO mesh_provision;

--
-- Name: VIEW stale_credentials; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON VIEW provision.stale_credentials IS 'Pairs with a holder lacking a current copy of their credential: they must be made again, for every holder at once.';

--
-- Name: COLUMN stale_credentials.provision; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.stale_credentials.provision IS 'What is provided.';

--
-- Name: COLUMN stale_credentials.consumer; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.stale_credentials.consumer IS 'The module granted it.';

--
-- Name: COLUMN stale_credentials.secret; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.stale_credentials.secret IS 'The name of the pair''s credential.';

--
-- Name: COLUMN stale_credentials.holders_without_copy; Type: COMMENT; Schema: provision; Owner: mesh_provision
--

COMMENT ON COLUMN provision.stale_credentials.holders_without_copy IS 'Holders with no current sealed copy: a new holder or a changed sealing key (mesh secret remake seals it again).';

--
-- Name: migration_digest; Type: TABLE; Schema: secret; Owner: mesh_secret
--

CREATE TABLE secret.migration_digest (
    name text NOT NULL,
    sha256 text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE secret.migration_digest OWNER TO mesh_secret;

--
-- Name: TABLE migration_digest; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON TABLE secret.migration_digest IS 'sha256 of each migration file as it ran; an edited file is refused (M1)';

--
-- Name: node_resources; Type: VIEW; Schema: secret; Owner: mesh_secret
--

CREATE VIEW secret.node_resources AS
 SELECT h.holder AS node,
    jsonb_build_object('id', ('secret:'::text || h.path), 'kind', 'secret', 'path', h.path, 'mode', h.mode, 'sealed', h.blob) AS resource
   FROM secret.held h
  WHERE ((h.path IS NOT NULL) AND h.current);

ALTER TABLE secret.node_resources OWNER TO mesh_secret;

--
-- Name: VIEW node_resources; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON VIEW secret.node_resources IS 'Sealed files of secrets with a path of their own, one per current holder. Provision credentials are placed by provision.node_resources.';

--
-- Name: pgmigrations; Type: TABLE; Schema: secret; Owner: mesh_secret
--

CREATE TABLE secret.pgmigrations (
    id integer NOT NULL,
    name character varying(255) NOT NULL,
    run_on timestamp without time zone NOT NULL
);

ALTER TABLE secret.pgmigrations OWNER TO mesh_secret;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE; Schema: secret; Owner: mesh_secret
--

CREATE SEQUENCE secret.pgmigrations_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER TABLE secret.pgmigrations_id_seq OWNER TO mesh_secret;

--
-- Name: pgmigrations_id_seq; Type: SEQUENCE OWNED BY; Schema: secret; Owner: mesh_secret
--

ALTER SEQUENCE secret.pgmigrations_id_seq OWNED BY secret.pgmigrations.id;

--
-- Name: stale; Type: VIEW; Schema: secret; Owner: mesh_secret
--

CREATE VIEW secret.stale AS
 SELECT held.secret,
    held.origin,
    held.generation,
    array_agg(held.holder ORDER BY held.holder) AS stale_holders
   FROM secret.held
  WHERE (NOT held.current)
  GROUP BY held.secret, held.origin, held.generation;

ALTER TABLE secret.stale OWNER TO mesh_secret;

--
-- Name: VIEW stale; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON VIEW secret.stale IS 'Secrets with a blob sealed to a key its holder no longer has: made ones are made again, accepted ones must be issued again.';

--
-- Name: COLUMN stale.secret; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.stale.secret IS 'The secret''s name.';

--
-- Name: COLUMN stale.origin; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.stale.origin IS 'made or accepted.';

--
-- Name: COLUMN stale.generation; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.stale.generation IS 'Its generation.';

--
-- Name: COLUMN stale.stale_holders; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.stale.stale_holders IS 'Holders whose copy no longer opens with their sealing key.';

--
-- Name: status; Type: VIEW; Schema: secret; Owner: mesh_secret
--

CREATE VIEW secret.status AS
SELECT
    NULL::text AS name,
    NULL::text AS origin,
    NULL::integer AS generation,
    NULL::text AS path,
    NULL::timestamp with time zone AS created_at,
    NULL::timestamp with time zone AS sealed_at,
    NULL::text[] AS holders,
    NULL::text[] AS stale_holders;

ALTER TABLE secret.status OWNER TO mesh_secret;

--
-- Name: VIEW status; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON VIEW secret.status IS 'One row a secret: made or accepted, its generation, who holds it, whose copy is stale. Never a value.';

--
-- Name: COLUMN status.name; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.status.name IS 'The secret''s name; a pair''s credential is provision/PROVISION/CONSUMER.';

--
-- Name: COLUMN status.origin; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.status.origin IS 'made (generated by the mesh, may be made again) or accepted (another system was told it: never regenerated).';

--
-- Name: COLUMN status.generation; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.status.generation IS 'Goes up each time the value changes.';

--
-- Name: COLUMN status.path; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.status.path IS 'Where it is written on each holder; null when provision places it.';

--
-- Name: COLUMN status.created_at; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.status.created_at IS 'When it was first made or accepted.';

--
-- Name: COLUMN status.sealed_at; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.status.sealed_at IS 'When the current value was sealed.';

--
-- Name: COLUMN status.holders; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.status.holders IS 'Every node holding a sealed copy.';

--
-- Name: COLUMN status.stale_holders; Type: COMMENT; Schema: secret; Owner: mesh_secret
--

COMMENT ON COLUMN secret.status.stale_holders IS 'Holders whose copy is sealed to a key they no longer have (or who are gone): sealed again on the next remake.';

--
-- Name: pgmigrations id; Type: DEFAULT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.pgmigrations ALTER COLUMN id SET DEFAULT nextval('assignment.pgmigrations_id_seq'::regclass);

--
-- Name: pgmigrations id; Type: DEFAULT; Schema: audit; Owner: mesh_audit
--

ALTER TABLE ONLY audit.pgmigrations ALTER COLUMN id SET DEFAULT nextval('audit.pgmigrations_id_seq'::regclass);

--
-- Name: pgmigrations id; Type: DEFAULT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.pgmigrations ALTER COLUMN id SET DEFAULT nextval('catalogue.pgmigrations_id_seq'::regclass);

--
-- Name: pgmigrations id; Type: DEFAULT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.pgmigrations ALTER COLUMN id SET DEFAULT nextval('inventory.pgmigrations_id_seq'::regclass);

--
-- Name: pgmigrations id; Type: DEFAULT; Schema: overlay; Owner: mesh_overlay
--

ALTER TABLE ONLY "overlay".pgmigrations ALTER COLUMN id SET DEFAULT nextval('"overlay".pgmigrations_id_seq'::regclass);

--
-- Name: pgmigrations id; Type: DEFAULT; Schema: provision; Owner: mesh_provision
--

ALTER TABLE ONLY provision.pgmigrations ALTER COLUMN id SET DEFAULT nextval('provision.pgmigrations_id_seq'::regclass);

--
-- Name: pgmigrations id; Type: DEFAULT; Schema: secret; Owner: mesh_secret
--

ALTER TABLE ONLY secret.pgmigrations ALTER COLUMN id SET DEFAULT nextval('secret.pgmigrations_id_seq'::regclass);

--
-- Name: agent_feature agent_feature_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.agent_feature
    ADD CONSTRAINT agent_feature_pkey PRIMARY KEY (kind);

--
-- Name: agent_target agent_target_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.agent_target
    ADD CONSTRAINT agent_target_pkey PRIMARY KEY (node);

--
-- Name: assignment assignment_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.assignment
    ADD CONSTRAINT assignment_pkey PRIMARY KEY (module, node);

--
-- Name: declaration declaration_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.declaration
    ADD CONSTRAINT declaration_pkey PRIMARY KEY (node, serial);

--
-- Name: freeze freeze_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment."freeze"
    ADD CONSTRAINT freeze_pkey PRIMARY KEY (id);

--
-- Name: freshness_setting freshness_setting_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.freshness_setting
    ADD CONSTRAINT freshness_setting_pkey PRIMARY KEY (one);

--
-- Name: migration_digest migration_digest_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.migration_digest
    ADD CONSTRAINT migration_digest_pkey PRIMARY KEY (name);

--
-- Name: node_serial node_serial_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.node_serial
    ADD CONSTRAINT node_serial_pkey PRIMARY KEY (node);

--
-- Name: outbox outbox_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.outbox
    ADD CONSTRAINT outbox_pkey PRIMARY KEY (id);

--
-- Name: package_pin package_pin_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.package_pin
    ADD CONSTRAINT package_pin_pkey PRIMARY KEY (node, name);

--
-- Name: pgmigrations pgmigrations_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.pgmigrations
    ADD CONSTRAINT pgmigrations_pkey PRIMARY KEY (id);

--
-- Name: promise promise_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.promise
    ADD CONSTRAINT promise_pkey PRIMARY KEY (name);

--
-- Name: rollout_node rollout_node_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.rollout_node
    ADD CONSTRAINT rollout_node_pkey PRIMARY KEY (rollout, node);

--
-- Name: rollout rollout_pkey; Type: CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.rollout
    ADD CONSTRAINT rollout_pkey PRIMARY KEY (id);

--
-- Name: event event_pkey; Type: CONSTRAINT; Schema: audit; Owner: mesh_audit
--

ALTER TABLE ONLY audit.event
    ADD CONSTRAINT event_pkey PRIMARY KEY (seq);

--
-- Name: kind kind_pkey; Type: CONSTRAINT; Schema: audit; Owner: mesh_audit
--

ALTER TABLE ONLY audit.kind
    ADD CONSTRAINT kind_pkey PRIMARY KEY (name);

--
-- Name: migration_digest migration_digest_pkey; Type: CONSTRAINT; Schema: audit; Owner: mesh_audit
--

ALTER TABLE ONLY audit.migration_digest
    ADD CONSTRAINT migration_digest_pkey PRIMARY KEY (name);

--
-- Name: pgmigrations pgmigrations_pkey; Type: CONSTRAINT; Schema: audit; Owner: mesh_audit
--

ALTER TABLE ONLY audit.pgmigrations
    ADD CONSTRAINT pgmigrations_pkey PRIMARY KEY (id);

--
-- Name: watched watched_pkey; Type: CONSTRAINT; Schema: audit; Owner: mesh_audit
--

ALTER TABLE ONLY audit.watched
    ADD CONSTRAINT watched_pkey PRIMARY KEY (on_table, trigger);

--
-- Name: agent_chunk agent_chunk_pkey; Type: CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.agent_chunk
    ADD CONSTRAINT agent_chunk_pkey PRIMARY KEY (sha256, n);

--
-- Name: agent_package agent_package_pkey; Type: CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.agent_package
    ADD CONSTRAINT agent_package_pkey PRIMARY KEY (version);

--
-- Name: agent_package agent_package_sha256_key; Type: CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.agent_package
    ADD CONSTRAINT agent_package_sha256_key UNIQUE (sha256);

--
-- Name: build_progress build_progress_pkey; Type: CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.build_progress
    ADD CONSTRAINT build_progress_pkey PRIMARY KEY (seq);

--
-- Name: build_request build_request_pkey; Type: CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.build_request
    ADD CONSTRAINT build_request_pkey PRIMARY KEY (id);

--
-- Name: build_result build_result_pkey; Type: CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.build_result
    ADD CONSTRAINT build_result_pkey PRIMARY KEY (request_id);

--
-- Name: migration_digest migration_digest_pkey; Type: CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.migration_digest
    ADD CONSTRAINT migration_digest_pkey PRIMARY KEY (name);

--
-- Name: module module_pkey; Type: CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.module
    ADD CONSTRAINT module_pkey PRIMARY KEY (name);

--
-- Name: pgmigrations pgmigrations_pkey; Type: CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.pgmigrations
    ADD CONSTRAINT pgmigrations_pkey PRIMARY KEY (id);

--
-- Name: source source_pkey; Type: CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.source
    ADD CONSTRAINT source_pkey PRIMARY KEY (module);

--
-- Name: advisory advisory_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.advisory
    ADD CONSTRAINT advisory_pkey PRIMARY KEY (id);

--
-- Name: agent_skew agent_skew_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.agent_skew
    ADD CONSTRAINT agent_skew_pkey PRIMARY KEY (one);

--
-- Name: answered answered_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.answered
    ADD CONSTRAINT answered_pkey PRIMARY KEY (node, kind);

--
-- Name: apply_failure apply_failure_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.apply_failure
    ADD CONSTRAINT apply_failure_pkey PRIMARY KEY (node);

--
-- Name: bounds_setting bounds_setting_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.bounds_setting
    ADD CONSTRAINT bounds_setting_pkey PRIMARY KEY (one);

--
-- Name: broker broker_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.broker
    ADD CONSTRAINT broker_pkey PRIMARY KEY (address);

--
-- Name: chunk_handed chunk_handed_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.chunk_handed
    ADD CONSTRAINT chunk_handed_pkey PRIMARY KEY (node, sha256, n);

--
-- Name: console_session console_session_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.console_session
    ADD CONSTRAINT console_session_pkey PRIMARY KEY (session_hash);

--
-- Name: console_token console_token_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.console_token
    ADD CONSTRAINT console_token_pkey PRIMARY KEY (token_hash);

--
-- Name: dead_letter dead_letter_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.dead_letter
    ADD CONSTRAINT dead_letter_pkey PRIMARY KEY (id);

--
-- Name: drift_setting drift_setting_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.drift_setting
    ADD CONSTRAINT drift_setting_pkey PRIMARY KEY (one);

--
-- Name: migration_digest migration_digest_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.migration_digest
    ADD CONSTRAINT migration_digest_pkey PRIMARY KEY (name);

--
-- Name: node_package node_package_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.node_package
    ADD CONSTRAINT node_package_pkey PRIMARY KEY (node, name, arch);

--
-- Name: node node_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.node
    ADD CONSTRAINT node_pkey PRIMARY KEY (name);

--
-- Name: package_state package_state_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.package_state
    ADD CONSTRAINT package_state_pkey PRIMARY KEY (node);

--
-- Name: pgmigrations pgmigrations_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.pgmigrations
    ADD CONSTRAINT pgmigrations_pkey PRIMARY KEY (id);

--
-- Name: refusal refusal_fault_kind; Type: CHECK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE inventory.refusal
    ADD CONSTRAINT refusal_fault_kind CHECK ((fault = ANY (ARRAY['forged'::text, 'malformed'::text, 'replayed'::text, 'stale'::text]))) NOT VALID;

--
-- Name: refusal refusal_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.refusal
    ADD CONSTRAINT refusal_pkey PRIMARY KEY (node);

--
-- Name: refusal_said refusal_said_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.refusal_said
    ADD CONSTRAINT refusal_said_pkey PRIMARY KEY (node, fault);

--
-- Name: report report_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.report
    ADD CONSTRAINT report_pkey PRIMARY KEY (node);

--
-- Name: report_received report_received_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.report_received
    ADD CONSTRAINT report_received_pkey PRIMARY KEY (message_id);

--
-- Name: token token_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.token
    ADD CONSTRAINT token_pkey PRIMARY KEY (token_hash);

--
-- Name: wedge_setting wedge_setting_pkey; Type: CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.wedge_setting
    ADD CONSTRAINT wedge_setting_pkey PRIMARY KEY (one);

--
-- Name: address address_address_key; Type: CONSTRAINT; Schema: overlay; Owner: mesh_overlay
--

ALTER TABLE ONLY "overlay".address
    ADD CONSTRAINT address_address_key UNIQUE (address);

--
-- Name: address address_pkey; Type: CONSTRAINT; Schema: overlay; Owner: mesh_overlay
--

ALTER TABLE ONLY "overlay".address
    ADD CONSTRAINT address_pkey PRIMARY KEY (node);

--
-- Name: firewall_setting firewall_setting_pkey; Type: CONSTRAINT; Schema: overlay; Owner: mesh_overlay
--

ALTER TABLE ONLY "overlay".firewall_setting
    ADD CONSTRAINT firewall_setting_pkey PRIMARY KEY (one);

--
-- Name: hub hub_pkey; Type: CONSTRAINT; Schema: overlay; Owner: mesh_overlay
--

ALTER TABLE ONLY "overlay".hub
    ADD CONSTRAINT hub_pkey PRIMARY KEY (node);

--
-- Name: migration_digest migration_digest_pkey; Type: CONSTRAINT; Schema: overlay; Owner: mesh_overlay
--

ALTER TABLE ONLY "overlay".migration_digest
    ADD CONSTRAINT migration_digest_pkey PRIMARY KEY (name);

--
-- Name: pgmigrations pgmigrations_pkey; Type: CONSTRAINT; Schema: overlay; Owner: mesh_overlay
--

ALTER TABLE ONLY "overlay".pgmigrations
    ADD CONSTRAINT pgmigrations_pkey PRIMARY KEY (id);

--
-- Name: settings settings_pkey; Type: CONSTRAINT; Schema: overlay; Owner: mesh_overlay
--

ALTER TABLE ONLY "overlay".settings
    ADD CONSTRAINT settings_pkey PRIMARY KEY (one);

--
-- Name: grant grant_pkey; Type: CONSTRAINT; Schema: provision; Owner: mesh_provision
--

ALTER TABLE ONLY provision."grant"
    ADD CONSTRAINT grant_pkey PRIMARY KEY (provision, consumer);

--
-- Name: migration_digest migration_digest_pkey; Type: CONSTRAINT; Schema: provision; Owner: mesh_provision
--

ALTER TABLE ONLY provision.migration_digest
    ADD CONSTRAINT migration_digest_pkey PRIMARY KEY (name);

--
-- Name: pgmigrations pgmigrations_pkey; Type: CONSTRAINT; Schema: provision; Owner: mesh_provision
--

ALTER TABLE ONLY provision.pgmigrations
    ADD CONSTRAINT pgmigrations_pkey PRIMARY KEY (id);

--
-- Name: provision provision_pkey; Type: CONSTRAINT; Schema: provision; Owner: mesh_provision
--

ALTER TABLE ONLY provision.provision
    ADD CONSTRAINT provision_pkey PRIMARY KEY (name);

--
-- Name: setting setting_pkey; Type: CONSTRAINT; Schema: provision; Owner: mesh_provision
--

ALTER TABLE ONLY provision.setting
    ADD CONSTRAINT setting_pkey PRIMARY KEY (only_row);

--
-- Name: earlier earlier_pkey; Type: CONSTRAINT; Schema: secret; Owner: mesh_secret
--

ALTER TABLE ONLY secret.earlier
    ADD CONSTRAINT earlier_pkey PRIMARY KEY (secret, holder, generation);

--
-- Name: migration_digest migration_digest_pkey; Type: CONSTRAINT; Schema: secret; Owner: mesh_secret
--

ALTER TABLE ONLY secret.migration_digest
    ADD CONSTRAINT migration_digest_pkey PRIMARY KEY (name);

--
-- Name: pgmigrations pgmigrations_pkey; Type: CONSTRAINT; Schema: secret; Owner: mesh_secret
--

ALTER TABLE ONLY secret.pgmigrations
    ADD CONSTRAINT pgmigrations_pkey PRIMARY KEY (id);

--
-- Name: sealed sealed_pkey; Type: CONSTRAINT; Schema: secret; Owner: mesh_secret
--

ALTER TABLE ONLY secret.sealed
    ADD CONSTRAINT sealed_pkey PRIMARY KEY (secret, holder);

--
-- Name: secret secret_pkey; Type: CONSTRAINT; Schema: secret; Owner: mesh_secret
--

ALTER TABLE ONLY secret.secret
    ADD CONSTRAINT secret_pkey PRIMARY KEY (name);

--
-- Name: outbox_node; Type: INDEX; Schema: assignment; Owner: mesh_assignment
--

CREATE INDEX outbox_node ON assignment.outbox USING btree (node, serial);

--
-- Name: outbox_owed; Type: INDEX; Schema: assignment; Owner: mesh_assignment
--

CREATE INDEX outbox_owed ON assignment.outbox USING btree (next_attempt_at, id) WHERE (delivered_at IS NULL);

--
-- Name: rollout_node_wave; Type: INDEX; Schema: assignment; Owner: mesh_assignment
--

CREATE INDEX rollout_node_wave ON assignment.rollout_node USING btree (rollout, wave);

--
-- Name: rollout_one_open; Type: INDEX; Schema: assignment; Owner: mesh_assignment
--

CREATE UNIQUE INDEX rollout_one_open ON assignment.rollout USING btree ((true)) WHERE (state = ANY (ARRAY['holding'::text, 'rolling'::text, 'paused'::text, 'halted'::text]));

--
-- Name: build_request_module; Type: INDEX; Schema: catalogue; Owner: mesh_catalogue
--

CREATE INDEX build_request_module ON catalogue.build_request USING btree (module, requested_at DESC);

--
-- Name: advisory_range_package; Type: INDEX; Schema: inventory; Owner: mesh_inventory
--

CREATE INDEX advisory_range_package ON inventory.advisory_range USING btree (package);

--
-- Name: correction_by_resource; Type: INDEX; Schema: inventory; Owner: mesh_inventory
--

CREATE INDEX correction_by_resource ON inventory.correction USING btree (node, resource, corrected_at);

--
-- Name: dead_letter_by_node; Type: INDEX; Schema: inventory; Owner: mesh_inventory
--

CREATE INDEX dead_letter_by_node ON inventory.dead_letter USING btree (node, id);

--
-- Name: node_dialable_site; Type: INDEX; Schema: inventory; Owner: mesh_inventory
--

CREATE INDEX node_dialable_site ON inventory.node USING btree (site) WHERE (dialable IS NOT NULL);

--
-- Name: node_package_name; Type: INDEX; Schema: inventory; Owner: mesh_inventory
--

CREATE INDEX node_package_name ON inventory.node_package USING btree (name, version_key);

--
-- Name: node_package_source; Type: INDEX; Schema: inventory; Owner: mesh_inventory
--

CREATE INDEX node_package_source ON inventory.node_package USING btree (source, version_key);

--
-- Name: report_received_node_age; Type: INDEX; Schema: inventory; Owner: mesh_inventory
--

CREATE INDEX report_received_node_age ON inventory.report_received USING btree (node, received_at);

--
-- Name: status _RETURN; Type: RULE; Schema: secret; Owner: mesh_secret
--

CREATE OR REPLACE VIEW secret.status AS
 SELECT s.name,
    s.origin,
    s.generation,
    s.path,
    s.created_at,
    s.sealed_at,
    COALESCE(array_agg(h.holder ORDER BY h.holder) FILTER (WHERE (h.holder IS NOT NULL)), '{}'::text[]) AS holders,
    COALESCE(array_agg(h.holder ORDER BY h.holder) FILTER (WHERE ((h.holder IS NOT NULL) AND (NOT h.current))), '{}'::text[]) AS stale_holders
   FROM (secret.secret s
     LEFT JOIN secret.held h ON ((h.secret = s.name)))
  GROUP BY s.name;

--
-- Name: declaration audit_declaration; Type: TRIGGER; Schema: assignment; Owner: mesh_assignment
--

CREATE CONSTRAINT TRIGGER audit_declaration AFTER INSERT ON assignment.declaration DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit.on_declaration();

--
-- Name: freeze audit_freeze_made; Type: TRIGGER; Schema: assignment; Owner: mesh_assignment
--

CREATE CONSTRAINT TRIGGER audit_freeze_made AFTER INSERT OR DELETE ON assignment."freeze" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit.on_freeze();

--
-- Name: freeze audit_freeze_overridden; Type: TRIGGER; Schema: assignment; Owner: mesh_assignment
--

CREATE CONSTRAINT TRIGGER audit_freeze_overridden AFTER UPDATE OF overridden_at ON assignment."freeze" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((new.overridden_at IS DISTINCT FROM old.overridden_at)) EXECUTE FUNCTION audit.on_freeze();

--
-- Name: freeze audit_no_truncate; Type: TRIGGER; Schema: assignment; Owner: mesh_assignment
--

CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON assignment."freeze" FOR EACH STATEMENT EXECUTE FUNCTION audit.refuse_truncate();

--
-- Name: rollout audit_rollout_held; Type: TRIGGER; Schema: assignment; Owner: mesh_assignment
--

CREATE CONSTRAINT TRIGGER audit_rollout_held AFTER INSERT ON assignment.rollout DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit.on_rollout();

--
-- Name: rollout audit_rollout_moved; Type: TRIGGER; Schema: assignment; Owner: mesh_assignment
--

CREATE CONSTRAINT TRIGGER audit_rollout_moved AFTER UPDATE OF state, wave ON assignment.rollout DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((new.state IS DISTINCT FROM old.state) OR (new.wave IS DISTINCT FROM old.wave))) EXECUTE FUNCTION audit.on_rollout();

--
-- Name: assignment check_promises; Type: TRIGGER; Schema: assignment; Owner: mesh_assignment
--

CREATE CONSTRAINT TRIGGER check_promises AFTER INSERT OR DELETE OR UPDATE ON assignment.assignment DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assignment.check_promises();

--
-- Name: assignment note_change; Type: TRIGGER; Schema: assignment; Owner: mesh_assignment
--

CREATE TRIGGER note_change BEFORE INSERT OR DELETE OR UPDATE ON assignment.assignment FOR EACH ROW EXECUTE FUNCTION assignment.note_change();

--
-- Name: event event_append_only; Type: TRIGGER; Schema: audit; Owner: mesh_audit
--

CREATE TRIGGER event_append_only BEFORE DELETE OR UPDATE ON audit.event FOR EACH ROW EXECUTE FUNCTION audit.refuse_change();

--
-- Name: event event_chain; Type: TRIGGER; Schema: audit; Owner: mesh_audit
--

CREATE TRIGGER event_chain BEFORE INSERT ON audit.event FOR EACH ROW EXECUTE FUNCTION audit.chain();

--
-- Name: event event_no_truncate; Type: TRIGGER; Schema: audit; Owner: mesh_audit
--

CREATE TRIGGER event_no_truncate BEFORE TRUNCATE ON audit.event FOR EACH STATEMENT EXECUTE FUNCTION audit.refuse_change();

--
-- Name: module check_promises; Type: TRIGGER; Schema: catalogue; Owner: mesh_catalogue
--

CREATE CONSTRAINT TRIGGER check_promises AFTER INSERT OR DELETE OR UPDATE ON catalogue.module DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assignment.check_promises();

--
-- Name: module note_change; Type: TRIGGER; Schema: catalogue; Owner: mesh_catalogue
--

CREATE TRIGGER note_change BEFORE INSERT OR DELETE OR UPDATE ON catalogue.module FOR EACH ROW EXECUTE FUNCTION assignment.note_change();

--
-- Name: apply_failure apply_failure_changed; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE TRIGGER apply_failure_changed AFTER INSERT OR DELETE ON inventory.apply_failure FOR EACH ROW EXECUTE FUNCTION inventory.notify_console();

--
-- Name: apply_failure apply_failure_updated; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE TRIGGER apply_failure_updated AFTER UPDATE ON inventory.apply_failure FOR EACH ROW WHEN (((old.serial IS DISTINCT FROM new.serial) OR (old.failed IS DISTINCT FROM new.failed))) EXECUTE FUNCTION inventory.notify_console();

--
-- Name: broker audit_broker_added; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE CONSTRAINT TRIGGER audit_broker_added AFTER INSERT ON inventory.broker DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit.on_broker();

--
-- Name: broker audit_broker_changed; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE CONSTRAINT TRIGGER audit_broker_changed AFTER UPDATE OF fingerprint, node ON inventory.broker DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((new.fingerprint IS DISTINCT FROM old.fingerprint) OR (new.node IS DISTINCT FROM old.node))) EXECUTE FUNCTION audit.on_broker();

--
-- Name: broker audit_broker_removed; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE CONSTRAINT TRIGGER audit_broker_removed AFTER DELETE ON inventory.broker DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit.on_broker();

--
-- Name: broker audit_no_truncate; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON inventory.broker FOR EACH STATEMENT EXECUTE FUNCTION audit.refuse_truncate();

--
-- Name: node audit_no_truncate; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON inventory.node FOR EACH STATEMENT EXECUTE FUNCTION audit.refuse_truncate();

--
-- Name: node audit_node_enrolled; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE CONSTRAINT TRIGGER audit_node_enrolled AFTER UPDATE OF enrolled_at ON inventory.node DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((old.enrolled_at IS NULL) AND (new.enrolled_at IS NOT NULL))) EXECUTE FUNCTION audit.on_node();

--
-- Name: node audit_node_retired; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE CONSTRAINT TRIGGER audit_node_retired AFTER DELETE ON inventory.node DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit.on_node();

--
-- Name: refusal audit_refusal; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE CONSTRAINT TRIGGER audit_refusal AFTER INSERT OR UPDATE ON inventory.refusal DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit.on_refusal();

--
-- Name: token audit_token_issued; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE CONSTRAINT TRIGGER audit_token_issued AFTER INSERT ON inventory.token DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit.on_token();

--
-- Name: token audit_token_spent; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE CONSTRAINT TRIGGER audit_token_spent AFTER UPDATE OF spent_at ON inventory.token DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN (((old.spent_at IS NULL) AND (new.spent_at IS NOT NULL))) EXECUTE FUNCTION audit.on_token();

--
-- Name: node node_changed; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE TRIGGER node_changed AFTER INSERT OR DELETE ON inventory.node FOR EACH ROW EXECUTE FUNCTION inventory.notify_console();

--
-- Name: node node_here_since; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE TRIGGER node_here_since BEFORE UPDATE OF last_seen ON inventory.node FOR EACH ROW WHEN (((new.last_seen IS NOT NULL) AND ((old.last_seen IS NULL) OR ((new.last_seen - old.last_seen) > '00:02:30'::interval)))) EXECUTE FUNCTION inventory.keep_here_since();

--
-- Name: node node_updated; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE TRIGGER node_updated AFTER UPDATE ON inventory.node FOR EACH ROW WHEN (((old.site IS DISTINCT FROM new.site) OR (old.dialable IS DISTINCT FROM new.dialable) OR (old.enrolled_at IS DISTINCT FROM new.enrolled_at) OR ((new.last_seen IS NOT NULL) AND ((old.last_seen IS NULL) OR ((new.last_seen - old.last_seen) > '00:02:30'::interval))))) EXECUTE FUNCTION inventory.notify_console();

--
-- Name: report report_changed; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE TRIGGER report_changed AFTER INSERT OR DELETE ON inventory.report FOR EACH ROW EXECUTE FUNCTION inventory.notify_console();

--
-- Name: report report_clears_failure; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE TRIGGER report_clears_failure AFTER INSERT OR UPDATE ON inventory.report FOR EACH ROW EXECUTE FUNCTION inventory.clear_failure();

--
-- Name: report report_updated; Type: TRIGGER; Schema: inventory; Owner: mesh_inventory
--

CREATE TRIGGER report_updated AFTER UPDATE ON inventory.report FOR EACH ROW WHEN (((old.serial IS DISTINCT FROM new.serial) OR (old.held IS DISTINCT FROM new.held) OR (old.failed IS DISTINCT FROM new.failed))) EXECUTE FUNCTION inventory.notify_console();

--
-- Name: hub check_promises; Type: TRIGGER; Schema: overlay; Owner: mesh_overlay
--

CREATE CONSTRAINT TRIGGER check_promises AFTER INSERT OR DELETE OR UPDATE ON "overlay".hub DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assignment.check_promises();

--
-- Name: hub note_change; Type: TRIGGER; Schema: overlay; Owner: mesh_overlay
--

CREATE TRIGGER note_change BEFORE INSERT OR DELETE OR UPDATE ON "overlay".hub FOR EACH ROW EXECUTE FUNCTION assignment.note_change();

--
-- Name: grant check_promises; Type: TRIGGER; Schema: provision; Owner: mesh_provision
--

CREATE CONSTRAINT TRIGGER check_promises AFTER INSERT OR DELETE OR UPDATE ON provision."grant" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION assignment.check_promises();

--
-- Name: grant note_change; Type: TRIGGER; Schema: provision; Owner: mesh_provision
--

CREATE TRIGGER note_change BEFORE INSERT OR DELETE OR UPDATE ON provision."grant" FOR EACH ROW EXECUTE FUNCTION assignment.note_change();

--
-- Name: secret audit_secret_created; Type: TRIGGER; Schema: secret; Owner: mesh_secret
--

CREATE CONSTRAINT TRIGGER audit_secret_created AFTER INSERT ON secret.secret DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION audit.on_secret();

--
-- Name: secret audit_secret_rotated; Type: TRIGGER; Schema: secret; Owner: mesh_secret
--

CREATE CONSTRAINT TRIGGER audit_secret_rotated AFTER UPDATE OF generation ON secret.secret DEFERRABLE INITIALLY DEFERRED FOR EACH ROW WHEN ((new.generation > old.generation)) EXECUTE FUNCTION audit.on_secret();

--
-- Name: outbox outbox_declaration; Type: FK CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.outbox
    ADD CONSTRAINT outbox_declaration FOREIGN KEY (node, serial) REFERENCES assignment.declaration(node, serial);

--
-- Name: rollout_node rollout_node_rollout_fkey; Type: FK CONSTRAINT; Schema: assignment; Owner: mesh_assignment
--

ALTER TABLE ONLY assignment.rollout_node
    ADD CONSTRAINT rollout_node_rollout_fkey FOREIGN KEY (rollout) REFERENCES assignment.rollout(id);

--
-- Name: event event_kind_fkey; Type: FK CONSTRAINT; Schema: audit; Owner: mesh_audit
--

ALTER TABLE ONLY audit.event
    ADD CONSTRAINT event_kind_fkey FOREIGN KEY (kind) REFERENCES audit.kind(name);

--
-- Name: agent_chunk agent_chunk_sha256_fkey; Type: FK CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.agent_chunk
    ADD CONSTRAINT agent_chunk_sha256_fkey FOREIGN KEY (sha256) REFERENCES catalogue.agent_package(sha256) ON DELETE CASCADE;

--
-- Name: build_progress build_progress_request_id_fkey; Type: FK CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.build_progress
    ADD CONSTRAINT build_progress_request_id_fkey FOREIGN KEY (request_id) REFERENCES catalogue.build_request(id) ON DELETE CASCADE;

--
-- Name: build_request build_request_module_fkey; Type: FK CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.build_request
    ADD CONSTRAINT build_request_module_fkey FOREIGN KEY (module) REFERENCES catalogue.source(module) ON DELETE CASCADE;

--
-- Name: build_result build_result_request_id_fkey; Type: FK CONSTRAINT; Schema: catalogue; Owner: mesh_catalogue
--

ALTER TABLE ONLY catalogue.build_result
    ADD CONSTRAINT build_result_request_id_fkey FOREIGN KEY (request_id) REFERENCES catalogue.build_request(id) ON DELETE CASCADE;

--
-- Name: advisory_range advisory_range_advisory_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.advisory_range
    ADD CONSTRAINT advisory_range_advisory_fkey FOREIGN KEY (advisory) REFERENCES inventory.advisory(id) ON DELETE CASCADE;

--
-- Name: answered answered_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.answered
    ADD CONSTRAINT answered_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: apply_failure apply_failure_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.apply_failure
    ADD CONSTRAINT apply_failure_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: broker broker_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.broker
    ADD CONSTRAINT broker_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE SET NULL;

--
-- Name: chunk_handed chunk_handed_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.chunk_handed
    ADD CONSTRAINT chunk_handed_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: correction correction_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.correction
    ADD CONSTRAINT correction_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: node_package node_package_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.node_package
    ADD CONSTRAINT node_package_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: package_state package_state_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.package_state
    ADD CONSTRAINT package_state_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: refusal refusal_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.refusal
    ADD CONSTRAINT refusal_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: refusal_said refusal_said_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.refusal_said
    ADD CONSTRAINT refusal_said_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: report report_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.report
    ADD CONSTRAINT report_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: report_received report_received_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.report_received
    ADD CONSTRAINT report_received_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: token token_node_fkey; Type: FK CONSTRAINT; Schema: inventory; Owner: mesh_inventory
--

ALTER TABLE ONLY inventory.token
    ADD CONSTRAINT token_node_fkey FOREIGN KEY (node) REFERENCES inventory.node(name) ON DELETE CASCADE;

--
-- Name: grant grant_provision_fkey; Type: FK CONSTRAINT; Schema: provision; Owner: mesh_provision
--

ALTER TABLE ONLY provision."grant"
    ADD CONSTRAINT grant_provision_fkey FOREIGN KEY (provision) REFERENCES provision.provision(name) ON DELETE CASCADE;

--
-- Name: earlier earlier_secret_fkey; Type: FK CONSTRAINT; Schema: secret; Owner: mesh_secret
--

ALTER TABLE ONLY secret.earlier
    ADD CONSTRAINT earlier_secret_fkey FOREIGN KEY (secret) REFERENCES secret.secret(name) ON DELETE CASCADE;

--
-- Name: sealed sealed_secret_fkey; Type: FK CONSTRAINT; Schema: secret; Owner: mesh_secret
--

ALTER TABLE ONLY secret.sealed
    ADD CONSTRAINT sealed_secret_fkey FOREIGN KEY (secret) REFERENCES secret.secret(name) ON DELETE CASCADE;

--
-- Name: SCHEMA assignment; Type: ACL; Schema: -; Owner: mesh_assignment
--

GRANT USAGE ON SCHEMA assignment TO mesh_catalogue;
GRANT USAGE ON SCHEMA assignment TO mesh_provision;
GRANT USAGE ON SCHEMA assignment TO mesh_inventory;
GRANT USAGE ON SCHEMA assignment TO mesh_audit;
GRANT USAGE ON SCHEMA assignment TO mesh_assignment_reader;
GRANT USAGE ON SCHEMA assignment TO mesh_inventory_reader;

--
-- Name: SCHEMA audit; Type: ACL; Schema: -; Owner: mesh_audit
--

GRANT USAGE ON SCHEMA audit TO mesh_audit_reader;

--
-- Name: SCHEMA catalogue; Type: ACL; Schema: -; Owner: mesh_catalogue
--

GRANT USAGE ON SCHEMA catalogue TO mesh_assignment;
GRANT USAGE ON SCHEMA catalogue TO mesh_catalogue_reader;
GRANT USAGE ON SCHEMA catalogue TO mesh_assignment_reader;

--
-- Name: SCHEMA inventory; Type: ACL; Schema: -; Owner: mesh_inventory
--

GRANT USAGE ON SCHEMA inventory TO mesh_assignment;
GRANT USAGE ON SCHEMA inventory TO mesh_overlay;
GRANT USAGE ON SCHEMA inventory TO mesh_secret;
GRANT USAGE ON SCHEMA inventory TO mesh_provision;
GRANT USAGE ON SCHEMA inventory TO mesh_catalogue;
GRANT USAGE ON SCHEMA inventory TO mesh_audit;
GRANT USAGE ON SCHEMA inventory TO mesh_inventory_reader;
GRANT USAGE ON SCHEMA inventory TO mesh_assignment_reader;

--
-- Name: SCHEMA "overlay"; Type: ACL; Schema: -; Owner: mesh_overlay
--

GRANT USAGE ON SCHEMA "overlay" TO mesh_assignment;
GRANT USAGE ON SCHEMA "overlay" TO mesh_overlay_reader;
GRANT USAGE ON SCHEMA "overlay" TO mesh_assignment_reader;

--
-- Name: SCHEMA provision; Type: ACL; Schema: -; Owner: mesh_provision
--

GRANT USAGE ON SCHEMA provision TO mesh_assignment;

--
-- Name: SCHEMA secret; Type: ACL; Schema: -; Owner: mesh_secret
--

GRANT USAGE ON SCHEMA secret TO mesh_assignment;
GRANT USAGE ON SCHEMA secret TO mesh_provision;
GRANT USAGE ON SCHEMA secret TO mesh_audit;

--
-- Name: FUNCTION broken_promises(); Type: ACL; Schema: assignment; Owner: mesh_assignment
--

REVOKE ALL ON FUNCTION assignment.broken_promises() FROM PUBLIC;
GRANT ALL ON FUNCTION assignment.broken_promises() TO mesh_assignment_reader;

--
-- Name: FUNCTION composition_of(node_name text); Type: ACL; Schema: assignment; Owner: mesh_assignment
--

REVOKE ALL ON FUNCTION assignment.composition_of(node_name text) FROM PUBLIC;
GRANT ALL ON FUNCTION assignment.composition_of(node_name text) TO mesh_assignment_reader;

--
-- Name: FUNCTION continue_serials(node_name text, applied bigint); Type: ACL; Schema: assignment; Owner: mesh_assignment
--

REVOKE ALL ON FUNCTION assignment.continue_serials(node_name text, applied bigint) FROM PUBLIC;

--
-- Name: FUNCTION count_held_changes(); Type: ACL; Schema: assignment; Owner: mesh_assignment
--

REVOKE ALL ON FUNCTION assignment.count_held_changes() FROM PUBLIC;
GRANT ALL ON FUNCTION assignment.count_held_changes() TO mesh_assignment_reader;

--
-- Name: FUNCTION explain_path(from_node text, to_node text, port integer); Type: ACL; Schema: assignment; Owner: mesh_assignment
--

REVOKE ALL ON FUNCTION assignment.explain_path(from_node text, to_node text, port integer) FROM PUBLIC;
GRANT ALL ON FUNCTION assignment.explain_path(from_node text, to_node text, port integer) TO mesh_assignment_reader;

--
-- Name: TABLE "freeze"; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment."freeze" TO mesh_assignment_reader;
GRANT TRIGGER ON TABLE assignment."freeze" TO mesh_audit;

--
-- Name: FUNCTION lose_openings(down text[]); Type: ACL; Schema: assignment; Owner: mesh_assignment
--

REVOKE ALL ON FUNCTION assignment.lose_openings(down text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION assignment.lose_openings(down text[]) TO mesh_assignment_reader;

--
-- Name: TABLE rollout; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT TRIGGER ON TABLE assignment.rollout TO mesh_audit;
GRANT SELECT ON TABLE assignment.rollout TO mesh_assignment_reader;

--
-- Name: TABLE promise; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.promise TO mesh_assignment_reader;

--
-- Name: FUNCTION append(event_kind text, event_node text, event_detail jsonb); Type: ACL; Schema: audit; Owner: mesh_audit
--

REVOKE ALL ON FUNCTION audit.append(event_kind text, event_node text, event_detail jsonb) FROM PUBLIC;

--
-- Name: TABLE event; Type: ACL; Schema: audit; Owner: mesh_audit
--

REVOKE ALL ON TABLE audit.event FROM mesh_audit;
GRANT SELECT,INSERT,REFERENCES,TRIGGER ON TABLE audit.event TO mesh_audit;
GRANT SELECT ON TABLE audit.event TO mesh_audit_reader;

--
-- Name: FUNCTION placements(); Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

REVOKE ALL ON FUNCTION catalogue.placements() FROM PUBLIC;
GRANT ALL ON FUNCTION catalogue.placements() TO mesh_catalogue_reader;

--
-- Name: FUNCTION close_console_session(session_hash bytea); Type: ACL; Schema: inventory; Owner: mesh_inventory
--

REVOKE ALL ON FUNCTION inventory.close_console_session(session_hash bytea) FROM PUBLIC;
GRANT ALL ON FUNCTION inventory.close_console_session(session_hash bytea) TO mesh_inventory_reader;

--
-- Name: FUNCTION delivered_declarations(); Type: ACL; Schema: inventory; Owner: mesh_inventory
--

REVOKE ALL ON FUNCTION inventory.delivered_declarations() FROM PUBLIC;
GRANT ALL ON FUNCTION inventory.delivered_declarations() TO mesh_inventory_reader;
GRANT ALL ON FUNCTION inventory.delivered_declarations() TO mesh_assignment;
GRANT ALL ON FUNCTION inventory.delivered_declarations() TO mesh_assignment_reader;

--
-- Name: FUNCTION spend_console_token(token_hash bytea, session_hash bytea, session_ttl interval); Type: ACL; Schema: inventory; Owner: mesh_inventory
--

REVOKE ALL ON FUNCTION inventory.spend_console_token(token_hash bytea, session_hash bytea, session_ttl interval) FROM PUBLIC;
GRANT ALL ON FUNCTION inventory.spend_console_token(token_hash bytea, session_hash bytea, session_ttl interval) TO mesh_inventory_reader;

--
-- Name: FUNCTION allocate_addresses(node_names text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".allocate_addresses(node_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".allocate_addresses(node_names text[]) TO mesh_assignment;

--
-- Name: FUNCTION broker_ports(); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".broker_ports() FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".broker_ports() TO mesh_assignment;

--
-- Name: FUNCTION check_hub_capacity(node_names text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".check_hub_capacity(node_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".check_hub_capacity(node_names text[]) TO mesh_assignment;

--
-- Name: FUNCTION check_members(names text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".check_members(names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".check_members(names text[]) TO mesh_assignment;
GRANT ALL ON FUNCTION "overlay".check_members(names text[]) TO mesh_overlay_reader;
GRANT ALL ON FUNCTION "overlay".check_members(names text[]) TO mesh_assignment_reader;

--
-- Name: FUNCTION count_lost_paths(down text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".count_lost_paths(down text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".count_lost_paths(down text[]) TO mesh_assignment;
GRANT ALL ON FUNCTION "overlay".count_lost_paths(down text[]) TO mesh_overlay_reader;
GRANT ALL ON FUNCTION "overlay".count_lost_paths(down text[]) TO mesh_assignment_reader;

--
-- Name: FUNCTION firewall_members(); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".firewall_members() FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".firewall_members() TO mesh_assignment;

--
-- Name: FUNCTION firewall_members(with_dialled_by boolean); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".firewall_members(with_dialled_by boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".firewall_members(with_dialled_by boolean) TO mesh_assignment;

--
-- Name: FUNCTION firewall_members_of(node_names text[], with_dialled_by boolean); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".firewall_members_of(node_names text[], with_dialled_by boolean) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".firewall_members_of(node_names text[], with_dialled_by boolean) TO mesh_assignment;

--
-- Name: FUNCTION interface_texts_of(node_names text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".interface_texts_of(node_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".interface_texts_of(node_names text[]) TO mesh_assignment;

--
-- Name: FUNCTION interfaces(); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".interfaces() FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".interfaces() TO mesh_assignment;

--
-- Name: FUNCTION interfaces_of(node_names text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".interfaces_of(node_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".interfaces_of(node_names text[]) TO mesh_assignment;

--
-- Name: FUNCTION long_peer_lists(); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".long_peer_lists() FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".long_peer_lists() TO mesh_assignment;

--
-- Name: FUNCTION lose_paths(down text[], max_pairs integer); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".lose_paths(down text[], max_pairs integer) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".lose_paths(down text[], max_pairs integer) TO mesh_assignment;
GRANT ALL ON FUNCTION "overlay".lose_paths(down text[], max_pairs integer) TO mesh_overlay_reader;
GRANT ALL ON FUNCTION "overlay".lose_paths(down text[], max_pairs integer) TO mesh_assignment_reader;

--
-- Name: FUNCTION member_groups(); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".member_groups() FROM PUBLIC;

--
-- Name: FUNCTION member_groups_without(down text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".member_groups_without(down text[]) FROM PUBLIC;

--
-- Name: FUNCTION members_grouped(node_names text[], down text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".members_grouped(node_names text[], down text[]) FROM PUBLIC;

--
-- Name: FUNCTION node_resources_of(node_names text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".node_resources_of(node_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".node_resources_of(node_names text[]) TO mesh_assignment;
GRANT ALL ON FUNCTION "overlay".node_resources_of(node_names text[]) TO mesh_overlay_reader;

--
-- Name: FUNCTION peers(); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".peers() FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".peers() TO mesh_assignment;
GRANT ALL ON FUNCTION "overlay".peers() TO mesh_overlay_reader;

--
-- Name: FUNCTION peers_of(node_names text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".peers_of(node_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".peers_of(node_names text[]) TO mesh_assignment;

--
-- Name: FUNCTION route_members(down text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".route_members(down text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".route_members(down text[]) TO mesh_assignment;
GRANT ALL ON FUNCTION "overlay".route_members(down text[]) TO mesh_overlay_reader;
GRANT ALL ON FUNCTION "overlay".route_members(down text[]) TO mesh_assignment_reader;

--
-- Name: FUNCTION ssh_port(); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".ssh_port() FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".ssh_port() TO mesh_assignment;

--
-- Name: FUNCTION strand_spokes(down text[]); Type: ACL; Schema: overlay; Owner: mesh_overlay
--

REVOKE ALL ON FUNCTION "overlay".strand_spokes(down text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION "overlay".strand_spokes(down text[]) TO mesh_assignment;
GRANT ALL ON FUNCTION "overlay".strand_spokes(down text[]) TO mesh_overlay_reader;
GRANT ALL ON FUNCTION "overlay".strand_spokes(down text[]) TO mesh_assignment_reader;

--
-- Name: FUNCTION acknowledged_generation(secret_name text, node_name text); Type: ACL; Schema: provision; Owner: mesh_provision
--

REVOKE ALL ON FUNCTION provision.acknowledged_generation(secret_name text, node_name text) FROM PUBLIC;

--
-- Name: FUNCTION settlement(secret_names text[]); Type: ACL; Schema: provision; Owner: mesh_provision
--

REVOKE ALL ON FUNCTION provision.settlement(secret_names text[]) FROM PUBLIC;
GRANT ALL ON FUNCTION provision.settlement(secret_names text[]) TO mesh_assignment;

--
-- Name: TABLE declaration; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT TRIGGER ON TABLE assignment.declaration TO mesh_audit;
GRANT SELECT ON TABLE assignment.declaration TO mesh_assignment_reader;

--
-- Name: TABLE acknowledged_sealed; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.acknowledged_sealed TO mesh_provision;
GRANT SELECT ON TABLE assignment.acknowledged_sealed TO mesh_assignment_reader;

--
-- Name: TABLE agent_feature; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.agent_feature TO mesh_assignment_reader;

--
-- Name: TABLE agent_holds; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.agent_holds TO mesh_assignment_reader;

--
-- Name: TABLE agent_target; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.agent_target TO mesh_assignment_reader;

--
-- Name: TABLE assignment; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.assignment TO mesh_assignment_reader;

--
-- Name: TABLE node_serial; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.node_serial TO mesh_assignment_reader;

--
-- Name: TABLE node; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT TRIGGER ON TABLE inventory.node TO mesh_audit;
GRANT SELECT ON TABLE inventory.node TO mesh_inventory_reader;

--
-- Name: TABLE enrolled_node; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.enrolled_node TO mesh_assignment;
GRANT SELECT ON TABLE inventory.enrolled_node TO mesh_overlay;
GRANT SELECT ON TABLE inventory.enrolled_node TO mesh_secret;
GRANT SELECT ON TABLE inventory.enrolled_node TO mesh_provision;
GRANT SELECT ON TABLE inventory.enrolled_node TO mesh_catalogue;
GRANT SELECT ON TABLE inventory.enrolled_node TO mesh_inventory_reader;
GRANT SELECT ON TABLE inventory.enrolled_node TO mesh_assignment_reader;

--
-- Name: TABLE declaration_freshness; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.declaration_freshness TO mesh_assignment_reader;

--
-- Name: TABLE declaration_status; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.declaration_status TO mesh_assignment_reader;

--
-- Name: TABLE outbox; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.outbox TO mesh_assignment_reader;

--
-- Name: TABLE delivered_newest; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.delivered_newest TO mesh_inventory;
GRANT SELECT ON TABLE assignment.delivered_newest TO mesh_assignment_reader;

--
-- Name: TABLE freeze_status; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.freeze_status TO mesh_assignment_reader;

--
-- Name: TABLE freshness_setting; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.freshness_setting TO mesh_assignment_reader;

--
-- Name: TABLE migration_digest; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.migration_digest TO mesh_assignment_reader;

--
-- Name: TABLE package_pin; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.package_pin TO mesh_assignment_reader;

--
-- Name: TABLE pending_delivery; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.pending_delivery TO mesh_inventory;
GRANT SELECT ON TABLE assignment.pending_delivery TO mesh_assignment_reader;
GRANT SELECT ON TABLE assignment.pending_delivery TO mesh_inventory_reader;

--
-- Name: TABLE pgmigrations; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.pgmigrations TO mesh_assignment_reader;

--
-- Name: TABLE placement; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.placement TO mesh_catalogue;
GRANT SELECT ON TABLE assignment.placement TO mesh_provision;
GRANT SELECT ON TABLE assignment.placement TO mesh_assignment_reader;

--
-- Name: TABLE promise_state; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.promise_state TO mesh_assignment_reader;

--
-- Name: TABLE rollout_node; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.rollout_node TO mesh_assignment_reader;

--
-- Name: TABLE rollout_nodes; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.rollout_nodes TO mesh_assignment_reader;

--
-- Name: TABLE rollout_status; Type: ACL; Schema: assignment; Owner: mesh_assignment
--

GRANT SELECT ON TABLE assignment.rollout_status TO mesh_assignment_reader;

--
-- Name: TABLE kind; Type: ACL; Schema: audit; Owner: mesh_audit
--

GRANT SELECT ON TABLE audit.kind TO mesh_audit_reader;

--
-- Name: TABLE log; Type: ACL; Schema: audit; Owner: mesh_audit
--

GRANT SELECT ON TABLE audit.log TO mesh_audit_reader;

--
-- Name: TABLE migration_digest; Type: ACL; Schema: audit; Owner: mesh_audit
--

GRANT SELECT ON TABLE audit.migration_digest TO mesh_audit_reader;

--
-- Name: TABLE watched; Type: ACL; Schema: audit; Owner: mesh_audit
--

GRANT SELECT ON TABLE audit.watched TO mesh_audit_reader;

--
-- Name: TABLE agent_chunk; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.agent_chunk TO mesh_catalogue_reader;

--
-- Name: TABLE agent_package; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.agent_package TO mesh_catalogue_reader;

--
-- Name: TABLE agent_packages; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.agent_packages TO mesh_catalogue_reader;
GRANT SELECT ON TABLE catalogue.agent_packages TO mesh_assignment;
GRANT SELECT ON TABLE catalogue.agent_packages TO mesh_assignment_reader;

--
-- Name: TABLE build_progress; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.build_progress TO mesh_catalogue_reader;

--
-- Name: TABLE build_request; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.build_request TO mesh_catalogue_reader;

--
-- Name: TABLE build_result; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.build_result TO mesh_catalogue_reader;

--
-- Name: TABLE build_status; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.build_status TO mesh_catalogue_reader;

--
-- Name: TABLE last_build; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.last_build TO mesh_catalogue_reader;

--
-- Name: TABLE migration_digest; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.migration_digest TO mesh_catalogue_reader;

--
-- Name: TABLE module; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.module TO mesh_catalogue_reader;
GRANT TRIGGER ON TABLE catalogue.module TO mesh_assignment;

--
-- Name: TABLE module_resources; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.module_resources TO mesh_assignment;
GRANT SELECT ON TABLE catalogue.module_resources TO mesh_catalogue_reader;

--
-- Name: TABLE source; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.source TO mesh_catalogue_reader;

--
-- Name: TABLE module_status; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.module_status TO mesh_catalogue_reader;

--
-- Name: TABLE pgmigrations; Type: ACL; Schema: catalogue; Owner: mesh_catalogue
--

GRANT SELECT ON TABLE catalogue.pgmigrations TO mesh_catalogue_reader;

--
-- Name: TABLE advisory; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.advisory TO mesh_inventory_reader;
GRANT SELECT ON TABLE inventory.advisory TO mesh_assignment;

--
-- Name: TABLE advisory_range; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.advisory_range TO mesh_inventory_reader;

--
-- Name: TABLE node_package; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.node_package TO mesh_inventory_reader;

--
-- Name: TABLE advisory_node; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.advisory_node TO mesh_inventory_reader;
GRANT SELECT ON TABLE inventory.advisory_node TO mesh_assignment;

--
-- Name: TABLE agent_skew; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.agent_skew TO mesh_inventory_reader;
GRANT SELECT ON TABLE inventory.agent_skew TO mesh_assignment;
GRANT SELECT ON TABLE inventory.agent_skew TO mesh_assignment_reader;

--
-- Name: TABLE apply_failure; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.apply_failure TO mesh_assignment;
GRANT SELECT ON TABLE inventory.apply_failure TO mesh_inventory_reader;
GRANT SELECT ON TABLE inventory.apply_failure TO mesh_assignment_reader;

--
-- Name: TABLE refusal; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT TRIGGER ON TABLE inventory.refusal TO mesh_audit;
GRANT SELECT ON TABLE inventory.refusal TO mesh_assignment;
GRANT SELECT ON TABLE inventory.refusal TO mesh_inventory_reader;
GRANT SELECT ON TABLE inventory.refusal TO mesh_assignment_reader;

--
-- Name: TABLE report; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.report TO mesh_inventory_reader;

--
-- Name: TABLE agent_versions; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.agent_versions TO mesh_inventory_reader;

--
-- Name: TABLE answered; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.answered TO mesh_inventory_reader;

--
-- Name: TABLE bounds_setting; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.bounds_setting TO mesh_inventory_reader;

--
-- Name: TABLE broker; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT TRIGGER ON TABLE inventory.broker TO mesh_audit;
GRANT SELECT ON TABLE inventory.broker TO mesh_inventory_reader;

--
-- Name: TABLE broker_nodes; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.broker_nodes TO mesh_assignment;
GRANT SELECT ON TABLE inventory.broker_nodes TO mesh_overlay;
GRANT SELECT ON TABLE inventory.broker_nodes TO mesh_inventory_reader;
GRANT SELECT ON TABLE inventory.broker_nodes TO mesh_assignment_reader;

--
-- Name: TABLE chunk_handed; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.chunk_handed TO mesh_inventory_reader;

--
-- Name: TABLE console_session; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.console_session TO mesh_inventory_reader;

--
-- Name: TABLE console_token; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.console_token TO mesh_inventory_reader;

--
-- Name: TABLE correction; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.correction TO mesh_inventory_reader;

--
-- Name: TABLE dead_letter; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.dead_letter TO mesh_inventory_reader;

--
-- Name: TABLE dead_letters; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.dead_letters TO mesh_inventory_reader;

--
-- Name: TABLE drift_setting; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.drift_setting TO mesh_inventory_reader;

--
-- Name: TABLE drift; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.drift TO mesh_inventory_reader;

--
-- Name: TABLE migration_digest; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.migration_digest TO mesh_inventory_reader;

--
-- Name: TABLE node_agent_version; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.node_agent_version TO mesh_assignment;
GRANT SELECT ON TABLE inventory.node_agent_version TO mesh_inventory_reader;
GRANT SELECT ON TABLE inventory.node_agent_version TO mesh_assignment_reader;

--
-- Name: TABLE wedge_setting; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.wedge_setting TO mesh_inventory_reader;

--
-- Name: TABLE node_status; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.node_status TO mesh_inventory_reader;

--
-- Name: TABLE package_state; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.package_state TO mesh_inventory_reader;

--
-- Name: TABLE path_end; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.path_end TO mesh_inventory_reader;
GRANT SELECT ON TABLE inventory.path_end TO mesh_assignment;
GRANT SELECT ON TABLE inventory.path_end TO mesh_assignment_reader;

--
-- Name: TABLE pgmigrations; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.pgmigrations TO mesh_inventory_reader;

--
-- Name: TABLE refusal_said; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.refusal_said TO mesh_inventory_reader;

--
-- Name: TABLE report_received; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT SELECT ON TABLE inventory.report_received TO mesh_inventory_reader;

--
-- Name: TABLE token; Type: ACL; Schema: inventory; Owner: mesh_inventory
--

GRANT TRIGGER ON TABLE inventory.token TO mesh_audit;
GRANT SELECT ON TABLE inventory.token TO mesh_inventory_reader;

--
-- Name: TABLE address; Type: ACL; Schema: overlay; Owner: mesh_overlay
--

GRANT SELECT ON TABLE "overlay".address TO mesh_overlay_reader;

--
-- Name: TABLE firewall_setting; Type: ACL; Schema: overlay; Owner: mesh_overlay
--

GRANT SELECT ON TABLE "overlay".firewall_setting TO mesh_overlay_reader;

--
-- Name: TABLE hub; Type: ACL; Schema: overlay; Owner: mesh_overlay
--

GRANT SELECT ON TABLE "overlay".hub TO mesh_overlay_reader;
GRANT TRIGGER ON TABLE "overlay".hub TO mesh_assignment;

--
-- Name: TABLE member; Type: ACL; Schema: overlay; Owner: mesh_overlay
--

GRANT SELECT ON TABLE "overlay".member TO mesh_overlay_reader;
GRANT SELECT ON TABLE "overlay".member TO mesh_assignment;

--
-- Name: TABLE migration_digest; Type: ACL; Schema: overlay; Owner: mesh_overlay
--

GRANT SELECT ON TABLE "overlay".migration_digest TO mesh_overlay_reader;

--
-- Name: TABLE node_resources; Type: ACL; Schema: overlay; Owner: mesh_overlay
--

GRANT SELECT ON TABLE "overlay".node_resources TO mesh_assignment;
GRANT SELECT ON TABLE "overlay".node_resources TO mesh_overlay_reader;

--
-- Name: TABLE peering; Type: ACL; Schema: overlay; Owner: mesh_overlay
--

GRANT SELECT ON TABLE "overlay".peering TO mesh_overlay_reader;

--
-- Name: TABLE pgmigrations; Type: ACL; Schema: overlay; Owner: mesh_overlay
--

GRANT SELECT ON TABLE "overlay".pgmigrations TO mesh_overlay_reader;

--
-- Name: TABLE settings; Type: ACL; Schema: overlay; Owner: mesh_overlay
--

GRANT SELECT ON TABLE "overlay".settings TO mesh_overlay_reader;

--
-- Name: TABLE "grant"; Type: ACL; Schema: provision; Owner: mesh_provision
--

GRANT TRIGGER ON TABLE provision."grant" TO mesh_assignment;

--
-- Name: TABLE secret; Type: ACL; Schema: secret; Owner: mesh_secret
--

GRANT TRIGGER ON TABLE secret.secret TO mesh_audit;

--
-- Name: TABLE held; Type: ACL; Schema: secret; Owner: mesh_secret
--

GRANT SELECT ON TABLE secret.held TO mesh_provision;

--
-- Name: TABLE held_earlier; Type: ACL; Schema: secret; Owner: mesh_secret
--

GRANT SELECT ON TABLE secret.held_earlier TO mesh_provision;

--
-- Name: TABLE node_resources; Type: ACL; Schema: provision; Owner: mesh_provision
--

GRANT SELECT ON TABLE provision.node_resources TO mesh_assignment;

--
-- Name: TABLE node_resources; Type: ACL; Schema: secret; Owner: mesh_secret
--

GRANT SELECT ON TABLE secret.node_resources TO mesh_assignment;

--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: assignment; Owner: mesh_assignment
--

ALTER DEFAULT PRIVILEGES FOR ROLE mesh_assignment IN SCHEMA assignment GRANT SELECT ON TABLES  TO mesh_assignment_reader;

--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: catalogue; Owner: mesh_catalogue
--

ALTER DEFAULT PRIVILEGES FOR ROLE mesh_catalogue IN SCHEMA catalogue GRANT SELECT ON TABLES  TO mesh_catalogue_reader;

--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: inventory; Owner: mesh_inventory
--

ALTER DEFAULT PRIVILEGES FOR ROLE mesh_inventory IN SCHEMA inventory GRANT SELECT ON TABLES  TO mesh_inventory_reader;

--
-- Name: DEFAULT PRIVILEGES FOR TABLES; Type: DEFAULT ACL; Schema: overlay; Owner: mesh_overlay
--

ALTER DEFAULT PRIVILEGES FOR ROLE mesh_overlay IN SCHEMA "overlay" GRANT SELECT ON TABLES  TO mesh_overlay_reader;

--
-- Name: mesh_audit_guard; Type: EVENT TRIGGER; Schema: -; Owner: postgres
--

CREATE EVENT TRIGGER mesh_audit_guard ON ddl_command_end
         WHEN TAG IN ('ALTER TABLE', 'DROP TRIGGER', 'ALTER TRIGGER', 'CREATE TABLE')
   EXECUTE FUNCTION audit.guard_triggers();

ALTER EVENT TRIGGER mesh_audit_guard OWNER TO postgres;

--
-- PostgreSQL database dump complete
--
