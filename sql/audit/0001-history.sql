-- audit: the tamper-evident history of the mesh (C3). Every token issued and
-- spent, enrolment, declaration, refusal a host reported, secret created and
-- rotated, retire, with who and when, one row of audit.event each.
--
-- Append-only in the database itself: UPDATE, DELETE and TRUNCATE are revoked
-- from every role, this context's owner included, and a trigger refuses them
-- (MSH70) for whoever holds the privilege anyway (a superuser, an owner that
-- granted itself back). Hash-chained: each row carries the hash of the one
-- before, so a row edited by someone who got past both (a superuser with the
-- triggers off) is found by audit.verify(), which recomputes the chain.
--
-- The other contexts do not know audit exists: each granted TRIGGER on the
-- tables where its facts land, and the triggers here (security definer, owned
-- by mesh_audit) write the rows. They are deferred to the commit, so the
-- chain's one lock is taken at the end of a transaction and held only while it
-- commits: never while that transaction waits on anything else, so it cannot
-- deadlock, and a rolled-back change leaves no row.

create table audit.kind (
  name    text primary key check (name ~ '^[a-z][a-z-]{0,30}$'),
  meaning text not null
);
comment on table audit.kind is 'What a row of the history may record. A new kind is a row here (and a trigger where its fact lands); `mesh log --kind` reads this list.';
comment on column audit.kind.name is 'The kind, as mesh log prints it and --kind takes it (a prefix before a dash selects a family: --kind token).';
comment on column audit.kind.meaning is 'What a row of this kind says happened.';
insert into audit.kind (name, meaning) values
  ('token-issued',   'an enrolment token was issued for a node (its hash and expiry; never the secret)'),
  ('token-spent',    'a node spent its token (the identity key that spent it)'),
  ('enrolled',       'a node took its identity: its public keys, site and endpoint'),
  ('declared',       'a declaration was issued to a node: its serial and digest'),
  ('refused',        'a host refused a declaration: forged, malformed, replayed or stale, with its reason'),
  ('secret-created', 'a secret was first made or accepted'),
  ('rotated',        'a secret has a new generation: rotated, made again for a new key, or accepted again'),
  ('retired',        'a node was retired: its keys, tokens and last report forgotten');

create table audit.event (
  seq       bigint primary key,
  at        timestamptz not null,
  kind      text not null references audit.kind (name),
  node      text,
  detail    jsonb not null check (jsonb_typeof(detail) = 'object'),
  actor     text not null,
  role      text not null,
  prev_hash bytea not null check (octet_length(prev_hash) = 32),
  hash      bytea not null check (octet_length(hash) = 32)
);
comment on table audit.event is 'The history, append-only and hash-chained (C3): nothing here is ever changed or removed.';
comment on column audit.event.seq is '1, 2, 3 ... with no gap: the chain''s order, set by the append.';
comment on column audit.event.at is 'When: the time of the transaction that made the change.';
comment on column audit.event.kind is 'What happened (audit.kind).';
comment on column audit.event.node is 'The node it concerns, when one does.';
comment on column audit.event.detail is 'The facts of the change (serial, digest, fault and reason, ...): never a secret.';
comment on column audit.event.actor is 'Who: the program and user the session named (application_name: mesh token issue (alice), mesh serve (mesh)), else the role.';
comment on column audit.event.role is 'The database role of the session that made the change.';
comment on column audit.event.prev_hash is 'The hash of row seq - 1 (32 zero bytes for row 1).';
comment on column audit.event.hash is 'sha256(prev_hash || audit.row_text(row)).';

/* The canonical text a row is hashed over: every column but the hashes, as a
   JSON array (jsonb's text is one spelling for one value; the time is written
   in UTC, whatever the session's time zone). */
create function audit.row_text(e audit.event) returns text language sql stable as $$
  select jsonb_build_array(e.seq, to_char(e.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                           e.kind, e.node, e.detail, e.actor, e.role)::text
$$;

/* A row's hash, given the hash of the row before it. */
create function audit.link(prev bytea, e audit.event) returns bytea language sql stable as $$
  select sha256(prev || convert_to(audit.row_text(e), 'UTF8'))
$$;

/* Every insert is chained here, whoever wrote it: seq, time, who, and both
   hashes are set by the database, never by the caller. The chain's one turn
   is a transaction-scoped advisory lock, held until this transaction
   commits: the next append waits for it, then reads the newest row with a
   fresh snapshot, so two appends never take the same row as their parent.
   (A snapshot older than the lock, under repeatable read, would take the
   same seq: the primary key refuses it, so the chain still never forks.) A
   lock rather than a head row updated each time: a transaction declaring a
   whole fleet appends ten thousand rows, and ten thousand versions of one
   row made each append slower than the last. */
create function audit.chain() returns trigger language plpgsql as $$
declare last_seq bigint; last_hash bytea;
begin
  perform pg_advisory_xact_lock(hashtext('mesh audit chain'));
  select e.seq, e.hash into last_seq, last_hash from audit.event e order by e.seq desc limit 1;
  if not found then
    last_seq := 0;
    last_hash := decode(repeat('00', 32), 'hex');
  end if;
  new.seq := last_seq + 1;
  new.at := now();
  new.actor := coalesce(nullif(current_setting('application_name', true), ''), session_user);
  new.role := session_user;
  new.detail := coalesce(new.detail, '{}'::jsonb);
  new.prev_hash := last_hash;
  new.hash := audit.link(last_hash, new);
  return new;
end $$;
create trigger event_chain before insert on audit.event for each row execute function audit.chain();

/* C3: the history is append-only whatever the privileges say. */
create function audit.refuse_change() returns trigger language plpgsql as $$
begin
  raise exception 'the audit history is append-only: % on audit.event refused', tg_op using errcode = 'MSH70';
end $$;
create trigger event_append_only before update or delete on audit.event for each row execute function audit.refuse_change();
create trigger event_no_truncate before truncate on audit.event for each statement execute function audit.refuse_change();
-- The owner's own ordinary use included: only insert and select are left.
revoke update, delete, truncate on audit.event from mesh_audit;
revoke all on audit.event from public;

/* Append one row. Security definer, so the other contexts' triggers write
   the history without holding any right on it. */
create function audit.append(event_kind text, event_node text, event_detail jsonb) returns void
language sql security definer set search_path = pg_catalog, audit as $$
  insert into audit.event (kind, node, detail) values (event_kind, event_node, event_detail)
$$;
revoke execute on function audit.append(text, text, jsonb) from public;

/* The first row that does not match the chain recomputed from the start, or
   nothing when it is whole: a row whose hash is not its contents' (edited), a
   row that does not follow the one before (one removed or put back), or a gap
   in seq. Rows removed from the end leave a shorter chain that is whole: the
   newest hash, kept outside the database, is what shows that. */
create function audit.verify() returns table (seq bigint, kind text, node text, at timestamptz, problem text)
language plpgsql stable as $$
declare e audit.event; prev bytea := decode(repeat('00', 32), 'hex'); n bigint := 0;
begin
  for e in select * from audit.event x order by x.seq loop
    n := n + 1;
    if e.seq <> n then
      return query select e.seq, e.kind, e.node, e.at, format('rows %s to %s are missing', n, e.seq - 1);
      return;
    end if;
    if e.prev_hash <> prev then
      return query select e.seq, e.kind, e.node, e.at, format('it does not follow row %s (its prev_hash is not that row''s hash)', n - 1);
      return;
    end if;
    if e.hash <> audit.link(prev, e) then
      return query select e.seq, e.kind, e.node, e.at, 'its hash does not match its contents: the row was changed after it was written'::text;
      return;
    end if;
    prev := e.hash;
  end loop;
end $$;
comment on function audit.verify() is 'C3: recompute the chain; the first row that does not match, or no row when the history is whole.';

/* `mesh audit verify`: the history's length and newest hash when it is
   whole; otherwise the first row that does not match, refused with MSH71. */
create function audit.check_chain() returns table (rows bigint, head text) language plpgsql stable as $$
declare b record;
begin
  select * into b from audit.verify() limit 1;
  if found then
    raise exception 'the audit history does not match from row % (%, node %, at %): %', b.seq, coalesce(b.kind, '-'), coalesce(b.node, '-'), coalesce(b.at::text, '-'), b.problem
      using errcode = 'MSH71';
  end if;
  return query select (select count(*) from audit.event),
    coalesce((select encode(e.hash, 'hex') from audit.event e order by e.seq desc limit 1), repeat('0', 64));
end $$;

/* What `mesh log` reads: the history with its facts in one line. */
create view audit.log as
select e.seq, e.at, e.kind, e.node, e.actor, e.role, e.detail,
       coalesce((select string_agg(d.key || '=' || d.value, ' ' order by d.key) from jsonb_each_text(e.detail) d), '') as what
  from audit.event e;
comment on view audit.log is 'The history for a person: seq, when, kind, node, who, and its facts as key=value.';

-- The triggers on the other contexts' tables. Each is a deferred constraint
-- trigger: it runs at the commit of the change it records (see the banner).

/* inventory.token: issued (insert), spent (spent_at set). */
create function audit.on_token() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
begin
  if tg_op = 'INSERT' then
    perform audit.append('token-issued', new.node, jsonb_build_object('token', encode(new.token_hash, 'hex'), 'expires_at', new.expires_at));
  else
    perform audit.append('token-spent', new.node, jsonb_build_object('token', encode(new.token_hash, 'hex'), 'identity_key', encode(new.spent_by, 'hex')));
  end if;
  return null;
end $$;
create constraint trigger audit_token_issued after insert on inventory.token deferrable initially deferred
  for each row execute function audit.on_token();
create constraint trigger audit_token_spent after update of spent_at on inventory.token deferrable initially deferred
  for each row when (old.spent_at is null and new.spent_at is not null) execute function audit.on_token();

/* inventory.node: enrolled (enrolled_at set), retired (deleted). */
create function audit.on_node() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
begin
  if tg_op = 'DELETE' then
    perform audit.append('retired', old.name, jsonb_build_object('site', old.site, 'enrolled_at', old.enrolled_at));
  else
    perform audit.append('enrolled', new.name, jsonb_build_object('site', new.site, 'dialable', new.dialable,
      'identity_key', encode(new.identity_key, 'hex'), 'overlay_key', encode(new.overlay_key, 'hex'), 'sealing_key', encode(new.sealing_key, 'hex')));
  end if;
  return null;
end $$;
create constraint trigger audit_node_enrolled after update of enrolled_at on inventory.node deferrable initially deferred
  for each row when (old.enrolled_at is null and new.enrolled_at is not null) execute function audit.on_node();
create constraint trigger audit_node_retired after delete on inventory.node deferrable initially deferred
  for each row execute function audit.on_node();

/* inventory.refusal: each refusal a host reported (the table keeps the last). */
create function audit.on_refusal() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
begin
  perform audit.append('refused', new.node, jsonb_build_object('serial', new.serial, 'fault', new.fault, 'reason', new.reason));
  return null;
end $$;
create constraint trigger audit_refusal after insert or update on inventory.refusal deferrable initially deferred
  for each row execute function audit.on_refusal();

/* assignment.declaration: every declaration issued. */
create function audit.on_declaration() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
begin
  perform audit.append('declared', new.node, jsonb_build_object('serial', new.serial, 'digest', encode(new.digest, 'hex')));
  return null;
end $$;
create constraint trigger audit_declaration after insert on assignment.declaration deferrable initially deferred
  for each row execute function audit.on_declaration();

/* secret.secret: created (insert), a new generation (rotated). Never a value:
   the mesh holds none. */
create function audit.on_secret() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
begin
  perform audit.append(case when tg_op = 'INSERT' then 'secret-created' else 'rotated' end, null,
    jsonb_build_object('secret', new.name, 'origin', new.origin, 'generation', new.generation));
  return null;
end $$;
create constraint trigger audit_secret_created after insert on secret.secret deferrable initially deferred
  for each row execute function audit.on_secret();
create constraint trigger audit_secret_rotated after update of generation on secret.secret deferrable initially deferred
  for each row when (new.generation > old.generation) execute function audit.on_secret();
