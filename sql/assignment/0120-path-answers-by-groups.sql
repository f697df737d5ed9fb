-- assignment: the answers about paths read the hub groups (Q2, O4), as
-- overlay's graph answers do since sql/overlay/0120: a path between two
-- members that are not peers runs through each spoke end's route hub, so it
-- may cross two hubs (spoke, its hub, the other's hub, the other spoke), and
-- each hub on it must be in touch, current and hold the keys of its
-- neighbours on the path. 'no edge' is left for a graph that holds no path
-- at all: no hub, and two members that are not peers.
--
-- The openings a failure makes unreachable are found from the nodes that
-- lose a path (the spokes stranded behind a hub down, and the nodes down)
-- before any opening is composed: the openings of those nodes, and those
-- admitting one of them; at 10,000 nodes the whole firewall's sources cost
-- far more than the answer.

/* The openings over the overlay that become unreachable if the nodes DOWN
   fail: each source (a member whose overlay address an opening admits) that
   loses every path to the opening's node (one of them stranded, the two not
   peers), or whose opening's node is itself down. lost_hub is the hub the
   pair loses (the source's when it is stranded, else the node's; null: the
   node is down); carried_by the hub that would carry that end once the graph
   is computed again without DOWN (null: none). */
create or replace function assignment.lose_openings(down text[])
returns table (node text, proto text, port integer, port_to integer, why text, origin text, from_node text, lost_hub text, carried_by text)
language plpgsql stable security definer set search_path = pg_catalog, pg_temp set jit = off as $$
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
comment on function assignment.lose_openings(text[]) is 'Each opening over the overlay (provision, module, broker) and each source member that loses every path to it when DOWN fails: the hub lost (null: its node is down) and the hub that would carry it once the graph is computed again (null: none) (Q2).';

/* Why FROM_NODE cannot reach TO_NODE (on TCP port PORT, when given): the
   first fact that blocks the path, as one row (fact, detail, remedy), or
   'path open'. The facts, in the order they are looked for, each the cause
   of what follows it:
     no edge            the graph gives the two no path (not peers, and no hub to carry them);
     no opening         TO_NODE's firewall admits FROM_NODE's overlay address on no opening of PORT;
     end out of touch   an end, or a hub between them, is not here (out of touch, never spoken);
     end stale          ... holds a declaration that has expired (C2);
     end failing        ... could not finish its last apply;
     key not applied    one side's overlay key changed after the declaration the other last applied;
     declaration owed   an end or a hub between them is owed a declaration not yet delivered (W1).
   The path: two peers directly; otherwise FROM_NODE, its route hub when it
   is a spoke, TO_NODE's route hub when it is a spoke and another, TO_NODE. */
create or replace function assignment.explain_path(from_node text, to_node text, port integer default null)
returns table (fact text, detail text, remedy text)
language plpgsql stable security definer set search_path = pg_catalog, pg_temp as $$
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
comment on function assignment.explain_path(text, text, integer) is 'The first fact that blocks FROM_NODE reaching TO_NODE (on TCP PORT when given), along the path the hub groups give it (through one hub or two): no edge, no opening, end out of touch, end stale, end failing, key not applied, declaration owed; or path open. One row: fact, detail, remedy (Q2).';
