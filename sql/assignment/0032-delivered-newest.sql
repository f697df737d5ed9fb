-- What inventory needs to tell a wedged node (inventory 0014): the newest
-- declaration the broker confirmed onto each node's queue, and when. Read
-- through the outbox's (node, serial) index, newest first.

create view assignment.delivered_newest as
select distinct on (o.node) o.node, o.serial, o.delivered_at
  from assignment.outbox o
 where o.kind = 'declaration' and o.delivered_at is not null
 order by o.node, o.serial desc;
comment on view assignment.delivered_newest is 'Each node''s newest declaration confirmed onto its queue, and when (W1): a node here that has not applied it in time is wedged (inventory.node_status).';

grant select on assignment.delivered_newest to mesh_inventory;
