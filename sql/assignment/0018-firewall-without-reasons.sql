-- The firewall's openings (assignment 0007) as a function of whether their
-- reasons are wanted. Why: the one reason that costs anything, the WireGuard
-- opening's "dialled by", needs the whole peer graph (overlay 0007), and no
-- rule reads it; composing every node's firewall computed that graph a second
-- time for text it then dropped (bench 3). The firewalls are composed without
-- reasons; the view `mesh firewall show` and a DBA read is the same function
-- with them, so the rules have one definition. Not security definer and no
-- settings, so the planner may inline it into either caller.

/* Every opening of every node (as the view in 0007). WITH_REASONS false: the
   same rows, the WireGuard opening's reason null (the peer graph is not read). */
create function assignment.firewall_openings(with_reasons boolean)
returns table (node text, proto text, port integer, port_to integer, sources text[], via text, why text, origin text, reason text)
language sql stable as $$
  with fm as materialized (select * from overlay.firewall_members(with_reasons)),
binds as materialized (
  select x.node, x.resource->>'path' as path,
         convert_from(decode(x.resource->>'content', 'base64'), 'utf8')::jsonb as facts
    from provision.node_resources x
   where x.resource->>'kind' = 'file' and x.resource->>'path' like '%.binds'),
placed as (select a.module, a.node from assignment.assignment a),
ssh as (
  select e.name as node, 'tcp'::text as proto, overlay.ssh_port() as port, null::int as port_to,
         null::text[] as sources, null::text as via, 'ssh' as why, 'base' as origin,
         'ssh, so an operator is never locked out (overlay.firewall_setting.ssh_port)' as reason
    from inventory.enrolled_node e),
wg as (
  select m.node, 'udp', m.listen_port, null::int, null::text[], null::text, 'WireGuard', 'overlay',
         case when with_reasons then 'WireGuard: this node is dialable; dialled by ' || coalesce(nullif(array_to_string(m.dialled_by, ', '), ''), 'no peer yet') end
    from fm m where m.listen_port is not null),
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
         coalesce((select array_agg(distinct a.address order by a.address) from binds p join fm a on a.node = p.node
                    where p.path like '%/provides/%' and p.facts->>'provision' = c.facts->>'provision'
                      and p.facts->>'consumer' = c.facts->>'consumer'), '{}'),
         (select interface from fm limit 1),
         'route ' || (c.facts->>'provision') || ': proxy to ' || (c.facts->>'consumer'), 'provision',
         'route ' || (c.facts->>'provision') || ': the proxy reaches consumer module ' || (c.facts->>'consumer') || ' on its port'
    from binds c
   where c.facts->>'kind' = 'route' and c.path like '%/uses/%'
     and (c.facts->>'port') ~ '^[0-9]{1,5}$' and (c.facts->>'port')::int between 1 and 65535),
opening as (
  select pl.node, o.value->>'proto' as proto, (o.value->>'port')::int as port, (o.value->>'to')::int as port_to,
         o.value->>'from' as "from", o.value->>'name' as name, pl.module, o.value->>'why' as why
    from placed pl
    join catalogue.module_resources m on m.name = pl.module
    cross join lateral jsonb_array_elements(m.resources) o
   where o.value->>'kind' = 'opening'),
module as (
  select o.node, o.proto, o.port, o.port_to,
         case when o."from" = 'any' then null
              when o."from" like 'site:%' then coalesce((select array_agg(f.address order by f.address) from fm f where f.site = substr(o."from", 6)), '{}')
              else coalesce((select array_agg(distinct f.address order by f.address) from placed pl join fm f on f.node = pl.node
                              where pl.module = substr(o."from", 8)), '{}') end,
         case when o."from" = 'any' then null else (select interface from fm limit 1) end,
         coalesce(o.why, 'module ' || o.module || ': ' || o.name || ' from ' || o."from"), 'module',
         'module ' || o.module || ' serves ' || o.name || ' (' || o.proto || ' ' || o.port || coalesce('-' || o.port_to, '') || ') to ' || o."from"
    from opening o)
select node, proto, port, port_to, sources, via, left(why, 128) as why, origin, reason
  from (select * from ssh union all select * from wg union all select * from pg union all select * from route union all select * from module) x
 where port is not null
$$;
comment on function assignment.firewall_openings(boolean) is 'Every opening in every node''s firewall (X2), as assignment.firewall_opening; with_reasons false leaves the WireGuard opening''s reason null and does not compute the peer graph.';

create or replace view assignment.firewall_opening as select * from assignment.firewall_openings(true);
-- (create or replace keeps the view's comment, 0007's.)

/* firewalls as in 0010, reading the openings without their reasons. */
create or replace function assignment.firewalls(node_names text[])
returns table (node text, resource jsonb) language sql stable set jit = off rows 1000 as $$
  with want as materialized (
    select e.name as node from inventory.enrolled_node e
     where node_names is null or e.name in (select unnest(node_names))),
  o as (
    select o.node, jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
             'proto', o.proto, 'port', o.port,
             'to', case when o.port_to is distinct from o.port then o.port_to end,
             'from', to_jsonb(o.sources), 'via', o.via, 'why', o.why))
           order by o.proto, o.port, o.why, o.sources::text) as rules
      from assignment.firewall_openings(false) o join want w on w.node = o.node
     where o.sources is null or cardinality(o.sources) > 0
     group by o.node)
  select w.node, jsonb_build_object('id', 'firewall:mesh', 'kind', 'firewall', 'name', 'mesh', 'rules', coalesce(o.rules, '[]'::jsonb))
    from want w left join o on o.node = w.node
$$;
