-- The overlay's interfaces written as the text composing reads (issue 17,
-- bench 3). Why: compose_each turns every resource into its jsonb text, and a
-- hub's interface holds 9,999 peers (0.98 MB at bench 3's fleet). Built as
-- jsonb, each peer object was made, copied into jsonb_agg's array, copied
-- again into the interface object, walked and rebuilt once more by
-- jsonb_strip_nulls, and then printed: PostgreSQL 15 copies a jsonb value
-- token by token each time one is put inside another. Measured apart at bench
-- 3's fleet (test/bench/3c-compose-stats, PostgreSQL's CPU): the interfaces
-- 0.73-0.77 cpu-s, of which the peer graph 0.16-0.19; the same peers joined as
-- text 0.29.
--
-- The text is exactly jsonb's output of the object 0008 built (checked by md5
-- of every node's composition, old and new in one run, in that probe): keys in
-- jsonb's order (shorter first, then bytewise: id, hub, kind, name, peers,
-- address, listenPort; endpoint, keepalive, publicKey, allowedIps), ", " and
-- ": " between them, strings escaped by to_json (jsonb's own escaping), a key
-- whose value is null left out (what jsonb_strip_nulls did). Where a value
-- that is never null in a mesh is null after all (a key, the network, an
-- address), the object is built and stripped as jsonb as in 0008, so the rule
-- stays strip_nulls' in every case.
--
-- One definition: interfaces_of (and through it the view and node_resources)
-- is this text read back as jsonb.

/* One peer of an interface as jsonb text, its null keys left out. Stable, as
   to_json is: an immutable SQL function calling a stable one is not inlined,
   and called 59,398 times as a function it cost as much as the rest of the
   interfaces (bench 3's fleet). */
create function overlay.peer_text(public_key text, endpoint text, allowed_ips text[], keepalive integer) returns text
language sql stable parallel safe as $$
  select case
    when public_key is null or allowed_ips is null
      then jsonb_strip_nulls(jsonb_build_object('publicKey', public_key, 'endpoint', endpoint, 'allowedIps', to_jsonb(allowed_ips), 'keepalive', keepalive))::text
    else '{' || coalesce('"endpoint": ' || to_json(endpoint)::text || ', ', '')
             || coalesce('"keepalive": ' || keepalive::text || ', ', '')
             || '"publicKey": ' || to_json(public_key)::text
             || ', "allowedIps": ' || to_jsonb(allowed_ips)::text || '}'
  end
$$;
comment on function overlay.peer_text(text, text, text[], integer) is 'A WireGuard peer as a declaration carries it, as jsonb text: the keys that have a value, in jsonb''s order.';

/* overlay.interfaces_of (0008) for the nodes named (null: every node), each
   interface as jsonb's text of it, with its id beside it (compose sorts a
   node's resources by id). */
create function overlay.interface_texts_of(node_names text[]) returns table (node text, id text, resource text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
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
revoke execute on function overlay.interface_texts_of(text[]) from public;
grant execute on function overlay.interface_texts_of(text[]) to mesh_assignment;
comment on function overlay.interface_texts_of(text[]) is 'Each named node''s WireGuard interface (null: every node) as jsonb text, with its resource id: what compose_each reads (assignment 0025).';

create or replace function overlay.interfaces_of(node_names text[]) returns table (node text, resource jsonb)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 100 as $$
  select node, resource::jsonb from overlay.interface_texts_of(node_names)
$$;
