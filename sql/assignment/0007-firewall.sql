-- assignment: every node's firewall (X1, X2), composed from what the mesh
-- already knows. Here because assignment is the one context that sees every
-- other's contribution (it is migrated last): modules and where they run,
-- the overlay's members (overlay.firewall_members), and the provisions'
-- binds (provision.node_resources).
--
-- A node admits, beyond loopback, answers and the ICMP a network needs (the
-- host writes those itself):
--   ssh          from anywhere, on the mesh's ssh port (never locked out);
--   overlay      UDP on its WireGuard port, when it listens (it is dialable):
--                from anywhere, because a peer behind NAT comes from an
--                address nobody knows in advance;
--   provision    a postgres provider's port, from the overlay addresses of
--                the nodes its consumers run on, over the overlay, and from
--                nothing else; a route's consumer port, from the nodes the
--                proxy runs on, the same way;
--   module       a port a module serves (an "opening" in its module file),
--                from "any", "site:S" (overlay addresses of S's nodes) or
--                "module:M" (overlay addresses of nodes running M).
-- Every opening carries why: the nft comment on the node (short) and the
-- reason in full here, for a DBA and `mesh firewall show`.

/* Every opening of every node, with its reason. sources null = anywhere;
   an empty list = nobody can be named yet (the rule is left out). */
create view assignment.firewall_opening as
with fm as materialized (select * from overlay.firewall_members()),
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
         'WireGuard: this node is dialable; dialled by ' || coalesce(nullif(array_to_string(m.dialled_by, ', '), ''), 'no peer yet')
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
 where port is not null;
comment on view assignment.firewall_opening is 'Every opening in every node''s firewall and why it exists (X2): proto, port (to port_to), sources (null = anywhere, {} = nobody yet, so left out), via (the overlay interface, when only overlay traffic may use it), why (the nft comment), origin (base, overlay, provision, module) and the reason in full.';

/* Each named node's firewall resource (every enrolled node when null): the
   whole inet mesh table, rules sorted so one truth is one set of bytes. */
create function assignment.firewalls(node_names text[])
returns table (node text, resource jsonb) language sql stable set jit = off rows 1000 as $$
  select e.name,
         jsonb_build_object('id', 'firewall:mesh', 'kind', 'firewall', 'name', 'mesh',
           'rules', coalesce((
             select jsonb_agg(jsonb_strip_nulls(jsonb_build_object(
                      'proto', o.proto, 'port', o.port,
                      'to', case when o.port_to is distinct from o.port then o.port_to end,
                      'from', to_jsonb(o.sources), 'via', o.via, 'why', o.why))
                    order by o.proto, o.port, o.why, o.sources::text)
               from assignment.firewall_opening o
              where o.node = e.name and (o.sources is null or cardinality(o.sources) > 0)), '[]'::jsonb))
    from inventory.enrolled_node e
   where node_names is null or e.name = any(node_names)
$$;

-- compose_each as in 0004, with two changes: a module's "opening" entries
-- are not resources (they become rules in the firewall above, never reach a
-- node as themselves), and every node's firewall is part of its declaration.
create or replace function assignment.compose_each(node_names text[])
returns table (node text, resources jsonb, resources_hash bytea, changed boolean)
language sql stable set jit = off rows 1000 as $$
  with want as materialized (
    select e.name as node from inventory.enrolled_node e
     where node_names is null or e.name = any(node_names)),
  r as (
    select a.node, e.value as resource
      from assignment.assignment a
      join want w on w.node = a.node
      join catalogue.module_resources m on m.name = a.module
      cross join lateral jsonb_array_elements(m.resources) e
     where e.value->>'kind' is distinct from 'opening'
    union all select x.node, x.resource from overlay.node_resources x join want w on w.node = x.node
    union all select x.node, x.resource from secret.node_resources x join want w on w.node = x.node
    union all select x.node, x.resource from provision.node_resources x join want w on w.node = x.node
    union all select f.node, f.resource from assignment.firewalls((select array_agg(node) from want)) f),
  c as (
    select w.node, coalesce(jsonb_agg(r.resource order by r.resource->>'id') filter (where r.resource is not null), '[]'::jsonb) as resources
      from want w left join r on r.node = w.node
     group by w.node)
  select c.node, c.resources, h.hash,
         h.hash is distinct from (select d.resources_hash from assignment.declaration d where d.node = c.node order by d.serial desc limit 1)
    from c cross join lateral (select sha256(convert_to(c.resources::text, 'utf8')) as hash) h
   order by c.node
$$;
