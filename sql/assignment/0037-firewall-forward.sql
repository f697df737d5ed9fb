-- O2: every overlay member's firewall names its overlay interface, and the
-- host renders a forward chain from it that lets nothing be forwarded in from
-- the overlay or out to it unless it goes both (a hub between two spokes).
-- A node outside the overlay has no interface and so no chain.

/* firewalls as in 0018, with the overlay interface as `forward`. */
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
     group by o.node),
  fm as (select m.node, m.interface from overlay.firewall_members(false) m join want w on w.node = m.node)
  select w.node, jsonb_strip_nulls(jsonb_build_object('id', 'firewall:mesh', 'kind', 'firewall', 'name', 'mesh',
                                                      'rules', coalesce(o.rules, '[]'::jsonb), 'forward', fm.interface))
    from want w left join o on o.node = w.node left join fm on fm.node = w.node
$$;
