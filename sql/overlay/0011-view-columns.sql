-- What each column of the overlay's views means, so docs/reference/sql.md
-- (generated from these comments) answers without the view's definition.

comment on column overlay.member.name is 'The node.';
comment on column overlay.member.site is 'Its site.';
comment on column overlay.member.dialable is 'host:port others dial; null behind NAT.';
comment on column overlay.member.public_key is 'Its WireGuard public key, base64.';
comment on column overlay.member.address is 'Its overlay address.';
comment on column overlay.member.hub is 'A hub: every other node peers with it and it forwards between spokes.';

comment on column overlay.peering.node is 'The node whose peer list this row is in.';
comment on column overlay.peering.peer is 'The peer.';
comment on column overlay.peering.public_key is 'The peer''s WireGuard public key; a key appears once in any list.';
comment on column overlay.peering.endpoint is 'Where node dials the peer (its host:port); null when the peer is behind NAT and dials node.';
comment on column overlay.peering.allowed_ips is 'The addresses routed to the peer: its own, or the whole range through a hub.';
comment on column overlay.peering.keepalive is 'Seconds between keepalives, set when node sits behind NAT; null otherwise.';
comment on column overlay.peering.route is 'True when this peer is node''s route to the whole overlay range: its hub.';
comment on column overlay.peering.reason is 'Why the two peer: hub (one of them is a hub) or site (the same site, one of them dialable).';
