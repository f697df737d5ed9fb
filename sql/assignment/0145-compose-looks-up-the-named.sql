/*
 * Composing a few nodes looks them up. firewall_openings_of as in 0130, its sources read for the nodes named: the
 * members whose addresses a few nodes' openings name are looked up, not every
 * member's address built (0.55 s at 100,000 nodes for 100 of them). The
 * openings themselves are the same rule, in the same statement. The nodes
 * named are looked up in two branches, all or by name: `names is null or name
 * in (...)` read every node (0.44 s at 100,000, in each of firewalls and
 * firewall_openings_of).
 */
create or replace function assignment.firewall_openings_of(node_names text[], with_reasons boolean)
returns table (node text, proto text, port integer, port_to integer, sources text[], via text, why text, origin text, reason text)
language plpgsql stable set jit = off as $fn$
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
end $fn$;

/* firewalls as in 0130, its nodes looked up by name. */
create or replace function assignment.firewalls(node_names text[])
returns table (node text, resource jsonb) language sql stable set jit = off rows 1000 as $$
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

/* Each node NODE_NAMES names (null: every node) whose agent cannot apply a
   kind, and why: the rule of agent_holds (0033), over the named nodes' few
   versions. The view read every node's version first to find them (0.15 s
   at 100,000 nodes, for any one node). */
create function assignment.agent_holds_of(node_names text[])
returns table (node text, kind text, agent_version text, first_version text) language sql stable as $$
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
comment on function assignment.agent_holds_of(text[]) is 'agent_holds for the nodes named (null: every node).';

create or replace view assignment.agent_holds as select * from assignment.agent_holds_of(null);

/* compose_each as in 0130, its nodes and their agents' holds looked up by name. */
create or replace function assignment.compose_each(node_names text[])
returns table (node text, resources text, resources_hash bytea, changed boolean)
language plpgsql stable set jit = off set work_mem = '64MB' rows 1000 as $fn$
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
end $fn$;
