-- assignment: which module runs where, and every declaration issued.

create table assignment.assignment (
  module      text not null,
  node        text not null,
  assigned_at timestamptz not null default now(),
  primary key (module, node)
);
comment on table assignment.assignment is 'Module M runs on node N. Names are checked against catalogue and inventory when assigned.';
comment on column assignment.assignment.module is 'A catalogue module name.';
comment on column assignment.assignment.node is 'An inventory node name.';
comment on column assignment.assignment.assigned_at is 'When it was assigned.';

create table assignment.node_serial (
  node   text primary key,
  serial bigint not null check (serial > 0)
);
comment on table assignment.node_serial is 'The last serial issued to each node. Allocating is an UPDATE of this row, so parallel declares for one node queue on its lock and serials stay unique and ordered (D2).';
comment on column assignment.node_serial.node is 'The node.';
comment on column assignment.node_serial.serial is 'The highest serial issued to it.';

create table assignment.declaration (
  node            text not null,
  serial          bigint not null,
  digest          bytea not null check (octet_length(digest) = 32),
  resources_hash  bytea not null check (octet_length(resources_hash) = 32),
  envelope        bytea not null,
  issued_at       timestamptz not null default now(),
  acknowledged_at timestamptz,
  superseded_at   timestamptz,
  primary key (node, serial)
);
comment on table assignment.declaration is 'Every declaration issued, exactly as published (signed envelope), so a rebuilt node can be handed it again.';
comment on column assignment.declaration.node is 'Whom it was for.';
comment on column assignment.declaration.serial is 'Only goes forward per node (D2).';
comment on column assignment.declaration.digest is 'sha256 of the signed body bytes.';
comment on column assignment.declaration.resources_hash is 'sha256 of the composed resources: an unchanged composition need not be sent again.';
comment on column assignment.declaration.envelope is 'The published bytes: {v, body, sig}.';
comment on column assignment.declaration.issued_at is 'When it was published.';
comment on column assignment.declaration.acknowledged_at is 'When the node reported it applied it.';
comment on column assignment.declaration.superseded_at is 'When the node reported it drained past it unapplied.';

/* Assign a module to a node; both names must exist. */
create function assignment.assign(module_name text, node_name text) returns boolean language plpgsql as $$
begin
  if not exists (select 1 from catalogue.module_resources where name = module_name) then
    raise exception 'no module named %', module_name using errcode = 'MSH20', hint = 'add it first: mesh module add FILE';
  end if;
  if not exists (select 1 from inventory.enrolled_node where name = node_name) then
    raise exception 'no enrolled node named %', node_name using errcode = 'MSH21', hint = 'see mesh node list';
  end if;
  insert into assignment.assignment (module, node) values (module_name, node_name) on conflict do nothing;
  return found;
end $$;

create function assignment.unassign(module_name text, node_name text) returns boolean language sql as $$
  delete from assignment.assignment where module = module_name and node = node_name returning true
$$;

/* The one composing path (plan, plan --json and declare all read this): every
   resource a node must hold, from every context, ordered by id so the same
   truth always gives the same bytes. */
create function assignment.compose(node_name text) returns jsonb language sql stable as $$
  select coalesce(jsonb_agg(r.resource order by r.resource->>'id'), '[]'::jsonb)
    from (
      select e.value as resource
        from assignment.assignment a
        join catalogue.module_resources m on m.name = a.module
        cross join lateral jsonb_array_elements(m.resources) e
       where a.node = node_name
      union all select resource from overlay.node_resources where node = node_name
      union all select resource from secret.node_resources where node = node_name
      union all select resource from provision.node_resources where node = node_name
    ) r
$$;

/* The serial the next declaration would carry, without taking it (plan). */
create function assignment.peek_serial(node_name text) returns bigint language sql stable as $$
  select coalesce((select serial from assignment.node_serial where node = node_name), 0) + 1
$$;

/* Take the next serial of each node, in one statement. */
create function assignment.allocate_serials(node_names text[]) returns table (node text, serial bigint) language sql as $$
  insert into assignment.node_serial as s (node, serial)
  select n, 1 from unnest(node_names) n
  on conflict (node) do update set serial = s.serial + 1
  returning s.node, s.serial
$$;

/* Nodes a declaration can be sent to: enrolled ones, of the names given or all. */
create function assignment.declarable(node_names text[]) returns table (node text) language sql stable as $$
  select name from inventory.enrolled_node where node_names is null or name = any(node_names) order by name
$$;

/* Record a batch of declarations in one statement (digests in hex, envelopes as their JSON text). */
create function assignment.record_declarations(nodes text[], serials bigint[], digests text[], hashes text[], envelopes text[])
returns integer language sql as $$
  with ins as (
    insert into assignment.declaration (node, serial, digest, resources_hash, envelope)
    select n, s, decode(d, 'hex'), decode(h, 'hex'), convert_to(e, 'utf8')
      from unnest(nodes, serials, digests, hashes, envelopes) as u(n, s, d, h, e) returning 1)
  select count(*)::int from ins
$$;

/* The node reported it applied SERIAL, having drained past SUPERSEDED (D2). */
create function assignment.acknowledge(node_name text, applied bigint, superseded bigint[]) returns void language sql as $$
  update assignment.declaration set acknowledged_at = coalesce(acknowledged_at, now())
   where node = node_name and serial = applied;
  update assignment.declaration set superseded_at = coalesce(superseded_at, now())
   where node = node_name and serial = any(superseded);
$$;

/* The newest declaration of a node, exactly as published: for a rebuilt host (R2). */
create function assignment.latest_envelope(node_name text) returns bytea language sql stable as $$
  select envelope from assignment.declaration where node = node_name order by serial desc limit 1
$$;

create view assignment.declaration_status as
select node, serial, encode(digest, 'hex') as digest, issued_at, acknowledged_at, superseded_at,
       case when acknowledged_at is not null then 'applied'
            when superseded_at is not null then 'superseded'
            else 'sent' end as state
  from assignment.declaration;
comment on view assignment.declaration_status is 'Each declaration and what became of it: sent, applied or superseded.';

/* Who runs what, for the catalogue's "which machines run it". */
create view assignment.placement as select module, node from assignment.assignment;
comment on view assignment.placement is 'Module M is assigned to node N.';
grant usage on schema assignment to mesh_catalogue;
grant select on assignment.placement to mesh_catalogue;
