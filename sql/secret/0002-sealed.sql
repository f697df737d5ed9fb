-- secret: made and accepted secrets, sealed once per holder (S1, S3, S4).
--
-- The mesh never holds a plaintext. A secret is one row here and one sealed
-- blob per holder; each blob records the sealing key it was sealed to, so "this
-- holder's key changed" is a comparison with inventory.enrolled_node rather than
-- a guess, and a blob sealed to a key nobody holds any more is never declared.

create table secret.secret (
  name       text primary key check (name ~ '^[a-z][a-z0-9-]{0,62}(/[a-z][a-z0-9-]{0,62}){0,3}$'),
  origin     text not null check (origin in ('made', 'accepted')),
  path       text check (path ~ '^/.*[^/]$'),
  mode       text not null default '0600' check (mode ~ '^0?[0-7]{3}$'),
  generation integer not null default 1 check (generation > 0),
  created_at timestamptz not null default now(),
  sealed_at  timestamptz not null default now()
);
comment on table secret.secret is 'A secret the mesh holds sealed, never in plaintext. One row a secret; its blobs are in secret.sealed.';
comment on column secret.secret.name is 'Its name. Provision credentials are named provision/<provision>/<consumer>; others are chosen by the operator.';
comment on column secret.secret.origin is 'made: the mesh generated it and nothing else ever knew it, so it may be made again. accepted: some other system was told it (a broker, a database superuser); it is never regenerated (S4).';
comment on column secret.secret.path is 'Where secret.node_resources places it on each holder; null when another context places it (provision does, under its own paths).';
comment on column secret.secret.mode is 'File mode of the placed file.';
comment on column secret.secret.generation is 'Goes up each time the value changes (made again, rotated, accepted again). Resealing the same value never happens: the mesh cannot read it.';
comment on column secret.secret.created_at is 'When it was first made or accepted.';
comment on column secret.secret.sealed_at is 'When the current value was sealed.';

create table secret.sealed (
  secret     text not null references secret.secret (name) on delete cascade,
  holder     text not null,
  sealed_to  bytea not null check (octet_length(sealed_to) = 32),
  blob       text not null check (blob ~ '^[A-Za-z0-9+/]+={0,2}$'),
  generation integer not null,
  primary key (secret, holder)
);
comment on table secret.sealed is 'One sealed copy of a secret per holder (S1). Only the holder''s private sealing key opens it.';
comment on column secret.sealed.secret is 'Which secret.';
comment on column secret.sealed.holder is 'The node that holds it (an inventory node name).';
comment on column secret.sealed.sealed_to is 'The X25519 sealing key it was sealed to. When inventory says the node now has another key, this blob is stale (S3).';
comment on column secret.sealed.blob is 'base64 of version | ephemeral public | nonce | ciphertext | tag (src/crypto/seal.ts).';
comment on column secret.sealed.generation is 'The secret generation this blob carries; every holder of a secret carries the same one.';

/* Check that every (holder, key) pair names an enrolled node by its current
   sealing key. A secret sealed to a key the node no longer holds is a secret
   nobody can open, so storing it would be a rotation that only looks done. */
create function secret.check_holders(holders text[], sealed_to text[]) returns void language plpgsql stable as $$
declare h text; k text; now_key bytea;
begin
  if coalesce(array_length(holders, 1), 0) = 0 then
    raise exception 'a secret needs at least one holder' using errcode = 'MSH44',
      hint = 'assign the modules that use it to a node first (mesh assign MODULE NODE)';
  end if;
  if array_length(holders, 1) <> array_length(sealed_to, 1) then
    raise exception 'holders and keys differ in number' using errcode = 'MSH44';
  end if;
  for h, k in select * from unnest(holders, sealed_to) loop
    select e.sealing_key into now_key from inventory.enrolled_node e where e.name = h;
    if now_key is null then
      raise exception 'node % cannot be resolved: it is not enrolled, so it has no sealing key', h using errcode = 'MSH41',
        hint = 'nothing was changed and the old secret keeps working; enrol the node again, or unassign it (see mesh node list)';
    end if;
    if now_key <> decode(k, 'hex') then
      raise exception 'node %''s sealing key changed while the secret was being sealed', h using errcode = 'MSH41',
        hint = 'nothing was changed; run the command again';
    end if;
  end loop;
end $$;

/* Store a made secret's new value, sealed to each holder (S1, S3). The whole
   set of blobs is replaced in one statement group, so every holder carries
   the same generation: no holder is left with a value the others lost.
   An accepted secret is refused (S4): the mesh cannot make a password some
   other system was told, and 32 random bytes in its place would be applied,
   reported as success, and fail to authenticate somewhere else entirely. */
create function secret.put_made(secret_name text, holders text[], sealed_to text[], blobs text[], secret_path text default null)
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
  delete from secret.sealed where secret = secret_name;
  insert into secret.sealed (secret, holder, sealed_to, blob, generation)
  select secret_name, h, decode(k, 'hex'), b, gen from unnest(holders, sealed_to, blobs) as u(h, k, b);
  return gen;
end $$;

/* Store a value some other system was told (S4), sealed to each holder. This
   is also how an accepted secret is issued again to a rejoined machine: the
   operator hands the value over once more. A made secret of that name is
   refused, so the two kinds never change places silently. */
create function secret.put_accepted(secret_name text, holders text[], sealed_to text[], blobs text[], secret_path text, secret_mode text)
returns integer language plpgsql as $$
declare s secret.secret; gen integer;
begin
  select * into s from secret.secret where name = secret_name for update;
  if found and s.origin = 'made' then
    raise exception 'secret % was made by the mesh; it cannot be replaced by an accepted value', secret_name
      using errcode = 'MSH42', hint = 'choose another name, or rotate it (mesh secret rotate)';
  end if;
  perform secret.check_holders(holders, sealed_to);
  insert into secret.secret as t (name, origin, path, mode) values (secret_name, 'accepted', secret_path, coalesce(secret_mode, '0600'))
  on conflict (name) do update set generation = t.generation + 1, sealed_at = now(), path = excluded.path, mode = excluded.mode
  returning t.generation into gen;
  delete from secret.sealed where secret = secret_name;
  insert into secret.sealed (secret, holder, sealed_to, blob, generation)
  select secret_name, h, decode(k, 'hex'), b, gen from unnest(holders, sealed_to, blobs) as u(h, k, b);
  return gen;
end $$;

/* Forget a secret and every blob of it. */
create function secret.forget(secret_name text) returns boolean language sql as $$
  delete from secret.secret where name = secret_name returning true
$$;

/* Every blob, and whether its holder still has the key it was sealed to. */
create view secret.held as
select s.name as secret, s.origin, s.generation, s.path, s.mode, b.holder, b.blob, b.sealed_to,
       (e.sealing_key is not null and e.sealing_key = b.sealed_to) as current
  from secret.secret s
  join secret.sealed b on b.secret = s.name
  left join inventory.enrolled_node e on e.name = b.holder;
comment on view secret.held is 'Each holder''s blob of each secret; current is false when the holder is gone or its sealing key changed (S3), and such a blob is never declared.';

/* S3: the secrets that must be made again because a holder's key changed (or it
   left). Accepted ones are listed too: asking to make them again is refused. */
create view secret.stale as
select secret, origin, generation, array_agg(holder order by holder) as stale_holders
  from secret.held where not current group by secret, origin, generation;
comment on view secret.stale is 'Secrets with a blob sealed to a key its holder no longer has: made ones are made again, accepted ones must be issued again.';

/* Status for `mesh secret list`: no value, only who holds what. */
create view secret.status as
select s.name, s.origin, s.generation, s.path, s.created_at, s.sealed_at,
       coalesce(array_agg(h.holder order by h.holder) filter (where h.holder is not null), '{}') as holders,
       coalesce(array_agg(h.holder order by h.holder) filter (where h.holder is not null and not h.current), '{}') as stale_holders
  from secret.secret s left join secret.held h on h.secret = s.name
 group by s.name;
comment on view secret.status is 'One row a secret: made or accepted, its generation, who holds it, whose copy is stale. Never a value.';

/* The secrets this context places itself (those with a path), on each holder
   whose key is current. A stale copy is left out rather than declared: a file
   the node cannot open would fail the whole apply. */
create or replace view secret.node_resources as
select h.holder as node,
       jsonb_build_object('id', 'secret:' || h.path, 'kind', 'secret', 'path', h.path, 'mode', h.mode, 'sealed', h.blob) as resource
  from secret.held h
 where h.path is not null and h.current;
comment on view secret.node_resources is 'Sealed files of secrets with a path of their own, one per current holder. Provision credentials are placed by provision.node_resources.';

grant select on secret.held to mesh_provision;
grant usage on schema secret to mesh_provision;
