-- A rotation without a window (S5, issue 17): the provider keeps accepting
-- the credential a consumer holds until every holder acknowledged the new
-- one. So the blobs a rotation replaces are not thrown away at once: they
-- are kept here, per generation, for the context that places the secret
-- (provision) to declare beside the new ones, and forgotten when it says the
-- rotation settled. Only secrets another context places (path is null, the
-- pair credentials) keep them: a secret this context places has one file per
-- holder and nothing to overlap.

create table secret.earlier (
  secret     text not null references secret.secret (name) on delete cascade,
  holder     text not null,
  generation integer not null check (generation > 0),
  sealed_to  bytea not null check (octet_length(sealed_to) = 32),
  blob       text not null check (blob ~ '^[A-Za-z0-9+/]+={0,2}$'),
  primary key (secret, holder, generation)
);
comment on table secret.earlier is 'Sealed copies of generations a rotation replaced, kept until the rotation settled (every holder acknowledged a newer one): the provider accepts them meanwhile.';
comment on column secret.earlier.secret is 'Which secret.';
comment on column secret.earlier.holder is 'The node the copy was sealed to.';
comment on column secret.earlier.generation is 'The generation it carries, older than secret.secret.generation.';
comment on column secret.earlier.sealed_to is 'The sealing key it was sealed to; a holder with another key now cannot open it, and it is never declared.';
comment on column secret.earlier.blob is 'As secret.sealed.blob.';

/* Store a made secret's new value, sealed to each holder (S1, S3), as in
   0003; the blobs it replaces move to secret.earlier when another context
   places the secret (path null), in the same statement group, so a holder
   that has not yet acknowledged the new value can still be accepted. */
create or replace function secret.put_made(secret_name text, holders text[], sealed_to text[], blobs text[], secret_path text default null)
returns integer language plpgsql as $$
declare s secret.secret; gen integer;
begin
  select * into s from secret.secret where name = secret_name for update;
  if found and s.origin = 'accepted' then
    raise exception 'secret % was accepted, not made: the mesh cannot make it again for a machine whose sealing key changed', secret_name
      using errcode = 'MSH40', hint = format('issue it again: mesh secret accept %s --from FILE (the value the other system knows)', secret_name);
  end if;
  perform secret.check_holders(holders, sealed_to);
  insert into secret.secret as t (name, origin, path) values (secret_name, 'made', secret_path)
  on conflict (name) do update set generation = t.generation + 1, sealed_at = now(), path = coalesce(excluded.path, t.path)
  returning t.generation into gen;
  insert into secret.earlier (secret, holder, generation, sealed_to, blob)
  select b.secret, b.holder, b.generation, b.sealed_to, b.blob
    from secret.sealed b join secret.secret t on t.name = b.secret
   where b.secret = secret_name and t.path is null
  on conflict do nothing;
  delete from secret.sealed where secret = secret_name;
  insert into secret.sealed (secret, holder, sealed_to, blob, generation)
  select secret_name, h, decode(k, 'hex'), b, gen from unnest(holders, sealed_to, blobs) as u(h, k, b);
  return gen;
end $$;

/* The rotation settled at generation BELOW (every holder acknowledged it):
   the copies of older generations are no longer accepted, so no longer kept. */
create function secret.forget_earlier(secret_name text, below integer) returns integer language sql as $$
  with gone as (delete from secret.earlier where secret = secret_name and generation < below returning 1)
  select count(*)::int from gone
$$;

/* Every kept earlier copy, and whether its holder still has the key it was sealed to. */
create view secret.held_earlier as
select e.secret, e.generation, e.holder, e.blob, (n.sealing_key is not null and n.sealing_key = e.sealed_to) as current
  from secret.earlier e
  left join inventory.enrolled_node n on n.name = e.holder;
comment on view secret.held_earlier is 'Each kept copy of an earlier generation; current is false when its holder is gone or has another sealing key (such a copy is never declared).';

grant select on secret.held_earlier to mesh_provision;
