-- The outbox (W1): everything the control plane owes a node is a row here,
-- written in the same transaction as the change that causes it, before it is a
-- message. `mesh serve` drains it with confirms; a row leaves (delivered_at)
-- only when the broker confirmed it. SQL keeps, the broker carries (W3).

create table assignment.outbox (
  id              bigint generated always as identity primary key,
  node            text not null,
  kind            text not null check (kind in ('declaration')),
  serial          bigint not null,
  payload         bytea not null,
  created_at      timestamptz not null default now(),
  attempts        integer not null default 0,
  last_error      text,
  next_attempt_at timestamptz not null default now(),
  delivered_at    timestamptz
);
comment on table assignment.outbox is 'What the control plane owes each node, one message a row, until the broker confirmed it (W1).';
comment on column assignment.outbox.node is 'Whom it is owed to: published to that node''s queue.';
comment on column assignment.outbox.kind is 'The message type the host reads it as.';
comment on column assignment.outbox.serial is 'The declaration serial it carries (hosts drop what is not newer, so a re-send is harmless).';
comment on column assignment.outbox.payload is 'The exact bytes to publish (a signed envelope).';
comment on column assignment.outbox.created_at is 'Owed since.';
comment on column assignment.outbox.attempts is 'Publishes tried and not confirmed.';
comment on column assignment.outbox.last_error is 'Why the last attempt failed, as a person reads it.';
comment on column assignment.outbox.next_attempt_at is 'Not tried again before this (backoff after a failure).';
comment on column assignment.outbox.delivered_at is 'When the broker confirmed it; null while owed.';

-- The drain and the idle sweep read only what is owed: a small index, however long the history.
create index outbox_owed on assignment.outbox (next_attempt_at, id) where delivered_at is null;
create index outbox_node on assignment.outbox (node, serial);

/* Record a batch of declarations and owe each to its node, in one statement;
   the NOTIFY is sent at commit, so serve wakes only for what committed. */
create or replace function assignment.record_declarations(nodes text[], serials bigint[], digests text[], hashes text[], envelopes text[])
returns integer language plpgsql as $$
declare
  n integer;
begin
  insert into assignment.declaration (node, serial, digest, resources_hash, envelope)
  select u.n, u.s, decode(u.d, 'hex'), decode(u.h, 'hex'), convert_to(u.e, 'utf8')
    from unnest(nodes, serials, digests, hashes, envelopes) as u(n, s, d, h, e);
  get diagnostics n = row_count;
  insert into assignment.outbox (node, kind, serial, payload)
  select u.n, 'declaration', u.s, convert_to(u.e, 'utf8')
    from unnest(nodes, serials, envelopes) as u(n, s, e);
  perform pg_notify('mesh_outbox', '');
  return n;
end $$;

/* W2: the nodes whose composition differs from what they were last declared, and no other. */
create function assignment.affected_nodes() returns table (node text) language sql stable as $$
  select c.node from assignment.compose_each(null) c where c.changed order by c.node
$$;
comment on function assignment.affected_nodes() is 'Enrolled nodes whose composition differs from their newest declaration (W2).';

/* The idle sweep: one cheap query, is anything owed and due now? */
create function assignment.owed_now() returns boolean language sql stable as $$
  select exists (select 1 from assignment.outbox where delivered_at is null and next_attempt_at <= now())
$$;

/* Take up to LIMIT_ROWS owed rows due by DUE_BY (now, or every owed row once
   the broker is back), locking them: several serves
   drain at once and none takes a row another holds (skip locked). Held until
   the caller's transaction ends: a serve killed mid-drain leaves them owed. */
create function assignment.take_owed(limit_rows integer, due_by timestamptz) returns table (id bigint, node text, kind text, serial bigint, payload bytea)
language sql as $$
  select o.id, o.node, o.kind, o.serial, o.payload from assignment.outbox o
   where o.delivered_at is null and o.next_attempt_at <= due_by
   order by o.id limit limit_rows
   for update skip locked
$$;

/* The broker confirmed these rows. */
create function assignment.mark_delivered(ids bigint[]) returns void language sql as $$
  update assignment.outbox set delivered_at = now(), last_error = null where id = any(ids) and delivered_at is null
$$;

/* These rows were not confirmed: they stay owed, tried again after a backoff
   doubling from 1 s to 60 s, and say why. */
create function assignment.mark_failed(ids bigint[], errors text[]) returns void language sql as $$
  update assignment.outbox o set attempts = o.attempts + 1, last_error = f.err,
         next_attempt_at = now() + least(60, power(2, o.attempts)) * interval '1 second'
    from unnest(ids, errors) as f(id, err)
   where o.id = f.id and o.delivered_at is null
$$;

create view assignment.pending_delivery as
select o.node, o.kind, o.serial, o.created_at as owed_since, o.attempts, o.last_error, o.next_attempt_at
  from assignment.outbox o where o.delivered_at is null;
comment on view assignment.pending_delivery is 'What is owed to whom, since when, how many attempts, and the last error (W1).';

-- node list says which nodes are owed their newest declaration: inventory reads it at call time.
grant usage on schema assignment to mesh_inventory;
grant select on assignment.pending_delivery to mesh_inventory;

-- W2's comparison: a node never declared holds nothing declared, the same as
-- an empty composition. Otherwise compose_each as in 0007: a module's
-- "opening" entries become firewall rules, and every node's firewall is part
-- of its declaration (so every enrolled node is owed at least its firewall).
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
         h.hash is distinct from coalesce(
           (select d.resources_hash from assignment.declaration d where d.node = c.node order by d.serial desc limit 1),
           sha256(convert_to('[]'::jsonb::text, 'utf8')))
    from c cross join lateral (select sha256(convert_to(c.resources::text, 'utf8')) as hash) h
   order by c.node
$$;
comment on function assignment.compose_each(text[]) is 'What each node''s next declaration carries: resources, their sha256, and whether that differs from its newest declaration (never declared counts as declared empty). Null for every enrolled node.';
