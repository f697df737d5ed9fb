-- Freshness (issue 20, TUF's freeze rule applied to fleet state): every
-- declaration says when it was signed and until when it holds. A host keeps
-- applying one that has expired (availability over purity) but says it is
-- stale; one already expired when it arrives is refused. serve signs a
-- still-current declaration again (a new serial, the same resources) at half
-- its lifetime, so a node that hears from the mesh is never stale.
--
-- The times are taken from the transaction's clock here, so the body the
-- command signs and the row it records carry the same two seconds: declare
-- reads signed_now() and expires_now() in the transaction that inserts the
-- row, and the columns default to the same two calls.

create table assignment.freshness_setting (
  one      boolean primary key default true check (one),
  lifetime interval not null default interval '7 days'
);
insert into assignment.freshness_setting default values;
comment on table assignment.freshness_setting is 'How long a declaration holds once signed, for this mesh (one row). serve signs one again at half of it.';

/* Set the lifetime; between 10 seconds (a lab) and a year. */
create function assignment.set_declaration_lifetime(wanted interval) returns interval language plpgsql as $$
begin
  if wanted is null or wanted < interval '10 seconds' or wanted > interval '1 year' then
    raise exception 'a declaration lifetime of % is outside 10 seconds to 1 year', wanted using errcode = 'MSH22',
      hint = 'give a lifetime such as 7d, 12h or 30m: mesh freshness --lifetime 7d';
  end if;
  update assignment.freshness_setting set lifetime = date_trunc('second', wanted);
  return date_trunc('second', wanted);
end $$;

/* This transaction's signing time, in whole seconds (the body carries seconds). */
create function assignment.signed_now() returns timestamptz language sql stable as $$
  select date_trunc('second', now())
$$;

/* Until when a declaration signed in this transaction holds. */
create function assignment.expires_now() returns timestamptz language sql stable as $$
  select date_trunc('second', now()) + date_trunc('second', (select lifetime from assignment.freshness_setting))
$$;

-- Declarations from before freshness carry neither: they are re-signed first.
alter table assignment.declaration
  add column signed_at  timestamptz default assignment.signed_now(),
  add column expires_at timestamptz default assignment.expires_now(),
  add constraint declaration_expires_after_signing check (expires_at > signed_at);
comment on column assignment.declaration.signed_at is 'When it was signed, as its body says (null: signed before declarations carried it).';
comment on column assignment.declaration.expires_at is 'Until when it holds, as its body says: a host that still applies it later reports stale.';

/* The newest declaration of every enrolled node, and how fresh it is: for a DBA and for serve. */
create view assignment.declaration_freshness as
select d.node, d.serial, d.signed_at, d.expires_at,
       d.expires_at is null or d.expires_at <= now() as expired
  from assignment.node_serial s
  join assignment.declaration d on d.node = s.node and d.serial = s.serial
  join inventory.enrolled_node e on e.name = s.node;
comment on view assignment.declaration_freshness is 'Each enrolled node''s newest declaration: when signed, until when it holds, whether that has passed.';

/* Nodes whose newest declaration is past half its life (or carries no expiry): serve signs them again. */
create function assignment.due_for_resigning() returns table (node text) language sql stable as $$
  select f.node from assignment.declaration_freshness f
   where f.expires_at is null
      or f.expires_at - (f.expires_at - f.signed_at) / 2 <= now()
   order by f.node
$$;
