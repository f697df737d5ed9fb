-- assignment: broker nodes' openings (issue 19, X2). A mesh node that runs
-- a broker node (named in inventory.broker_nodes.node) admits its broker's
-- TLS port from anywhere (nodes dial it, from wherever they are) and epmd
-- and the Erlang distribution (overlay.broker_ports) from the overlay
-- addresses of the other broker nodes only, over the overlay: the cluster's
-- own traffic never faces a public interface. A broker node with no other
-- yet admits no Erlang traffic at all (the rule's sources are empty, so it
-- is left out). Each opening says why in `mesh firewall show NODE`.
--
-- assignment.firewall_openings as in 0018, with the two broker parts; the
-- view firewall_opening and assignment.firewalls read it, so both follow.

/* Every opening of every node (as in 0018), the broker nodes' among them. */
create or replace function assignment.firewall_openings(with_reasons boolean)
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
    from opening o),
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
   where not exists (select 1 from opening o where o.node = bn.node and o.proto = 'tcp' and o.port = bn.amqps and o.port_to is null and o."from" = 'any')),
bp as (select * from overlay.broker_ports()),
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
    from (select distinct node from bn) n
   cross join lateral (select 'epmd' as what, bp.epmd_port as port from bp
                       union all select 'Erlang distribution', bp.dist_port from bp) x)
select node, proto, port, port_to, sources, via, left(why, 128) as why, origin, reason
  from (select * from ssh union all select * from wg union all select * from pg union all select * from route union all select * from module
        union all select * from broker_tls union all select * from broker_erl) x
 where port is not null
$$;
comment on function assignment.firewall_openings(boolean) is 'Every opening in every node''s firewall (X2), as assignment.firewall_opening, broker nodes'' TLS, epmd and distribution openings among them; with_reasons false leaves the WireGuard opening''s reason null and does not compute the peer graph.';
comment on view assignment.firewall_opening is 'Every opening in every node''s firewall and why it exists (X2): proto, port (to port_to), sources (null = anywhere, {} = nobody yet, so left out), via (the overlay interface, when only overlay traffic may use it), why (the nft comment), origin (base, overlay, provision, module, broker) and the reason in full.';
