-- Each spoke has one hub, and hubs divide a large fleet between them (O4).
-- Two reasons. A hub's interface holds a peer for every node it forwards to,
-- about 106 bytes each in its signed envelope, and every declaration is
-- refused over 8 MiB (src/wire/envelope.ts): with every node peering with
-- every hub (0003), a hub's declaration passes the limit at about 79,000
-- nodes however many hubs there are. And with two hubs or more, 0003 routed a
-- spoke through its own site's hub while the other hub held it as a peer
-- too: a packet from a spoke of hub A reached a spoke of hub B straight from
-- A, whose entry on that spoke carried only A's own address, and WireGuard
-- dropped it (a packet's source must be in its sender's allowed IPs).
--
-- The rule: each hub is a group (its place among the hubs by name); each
-- spoke belongs to the group of its address's /20 block modulo the number of
-- hubs (blocks fill in order, so the groups stay even as the fleet grows, and
-- a node enrolling never moves another). A spoke peers with its group's hub
-- alone and routes the whole range through it; a hub peers with its group's
-- spokes and with every other hub, whose entry carries that hub's /20 blocks
-- besides its own address, so a packet for another group's spoke goes hub to
-- hub, and every receiver finds the source in its sender's allowed IPs.
-- Blocks, not addresses: at 100,000 nodes in two groups a hub's entry for the
-- other carries about 13 blocks of 4,096 addresses, where its spokes'
-- addresses would be 1 MB; and a host takes at most 64 allowed IPs a peer
-- (src/wire/parse_resources.ts). A group holds at most hub_spokes (75,000 at
-- most: 8 MB of peers) and so about 19 blocks, while addresses are dense.
-- Same-site peering stays between spokes (its /32 is more specific than any
-- block); a hub peers only by the hub rule, so no hub holds another's spoke.
-- With one hub the graph is 0003's.
--
-- A hub holds at most overlay.settings.hub_spokes spokes: when the spokes need
-- more hubs than there are, declare refuses (MSHT1,
-- overlay.check_hub_capacity) and names the remedy, before any hub's
-- declaration is composed too large to send.

alter table overlay.settings add column hub_spokes integer not null default 50000 check (hub_spokes between 1 and 75000);
comment on column overlay.settings.hub_spokes is 'The most spokes one hub holds as peers; over it, hubs divide the spokes between them by address block (O4). At about 106 bytes a peer in the signed envelope, 50,000 keeps a hub''s declaration near 5.3 MB, under the 8 MiB limit with room for its site''s peers.';

/* Each member's group (O4): one a hub (its place by name), a spoke the
   group of its address's /20 block modulo the number of hubs. block is that
   /20, as text for allowed IPs. */
create function overlay.member_groups() returns table (name text, grp integer, groups integer, block text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 1000 as $$
  with s as (select network, hub_spokes from overlay.settings),
       m as materialized (select * from overlay.member),
       n as (select count(*) filter (where hub) as hubs, count(*) filter (where not hub) as spokes from m),
       g as (select greatest(1, n.hubs)::integer as groups from n)
  select m.name,
         case when m.hub
           then (row_number() over (partition by m.hub order by m.name) - 1)::integer
           else (((m.address - set_masklen(s.network::inet, 32)) >> 12) % g.groups)::integer
         end,
         g.groups,
         host(network(set_masklen(m.address, 20))) || '/20'
    from m cross join s cross join g
$$;
revoke execute on function overlay.member_groups() from public;
comment on function overlay.member_groups() is 'Each overlay member''s hub group (O4), how many groups there are, and its address''s /20 block.';

/* declare's check (O4): the spokes need more groups than there are hubs. */
create function overlay.check_hub_capacity() returns integer
language plpgsql stable security definer set search_path = pg_catalog, pg_temp as $$
declare
  hubs bigint; spokes bigint; cap integer; need bigint;
begin
  select count(*) filter (where hub), count(*) filter (where not hub) into hubs, spokes from overlay.member;
  select hub_spokes into cap from overlay.settings;
  need := ceil(spokes::numeric / cap);
  if hubs > 0 and need > hubs then
    raise exception '% spokes need at least % hubs of at most % spokes each, and the overlay has %', spokes, need, cap, hubs
      using errcode = 'MSHT1',
      hint = format('name %s more dialable nodes hubs (mesh overlay hub NODE); each hub''s declaration would otherwise pass the size limit', need - hubs);
  end if;
  return greatest(1, hubs)::integer;
end $$;
revoke execute on function overlay.check_hub_capacity() from public;
grant execute on function overlay.check_hub_capacity() to mesh_assignment;
comment on function overlay.check_hub_capacity() is 'The number of hub groups, one a hub (O4); refuses (MSHT1) when the spokes need more hubs than there are.';

/* overlay.peers_of as in 0008, the hub rule by group (O4). */
create or replace function overlay.peers_of(node_names text[]) returns table (node text, peer text, public_key text, endpoint text, allowed_ips text[], keepalive integer, route boolean, reason text)
language sql stable security definer set search_path = pg_catalog, pg_temp set jit = off rows 200 as $$
  with s as (select network, keepalive from overlay.settings),
       m as materialized (select m.*, g.grp, g.block from overlay.member m join overlay.member_groups() g on g.name = m.name),
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

comment on column overlay.member.hub is 'A hub: the spokes of its group peer with it, and it forwards between them and to the other hubs (O4).';
comment on column overlay.peering.allowed_ips is 'The addresses routed to the peer: its own; the whole range through a spoke''s hub; on a hub, another hub''s address and its group''s /20 blocks.';
