-- D2: the floor a rebuilt host is handed with its last report.

/* The newest declaration NODE_NAME acknowledged applying: its serial and
   digest. A host that lost or refused its kept declaration lost its own
   high-water mark with it; the mesh signs this floor into the last report
   (recover), and the host refuses every serial below it and, at it, every
   declaration but this one. Acknowledged, not issued: a host may rightly
   never have applied what was sent last, and a floor above what it applied
   would refuse the declaration it is about to be handed. */
create function assignment.acknowledged_floor(node_name text) returns table (serial bigint, digest text) language sql stable as $$
  select d.serial, encode(d.digest, 'hex')
    from assignment.declaration d
   where d.node = node_name and d.acknowledged_at is not null
   order by d.serial desc
   limit 1
$$;
