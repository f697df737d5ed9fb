-- The console (issue 21): who may look, and telling it when to look again.
-- Sign-in links are one-time tokens for people, kept beside the enrolment
-- tokens for machines and spent the same way (E1): stored hashed, found and
-- marked by one statement, expiring. The console reads the fleet from
-- inventory.node_status, so a change to the rows that view reads says so on
-- a channel the console listens on; it never polls each second.

create table inventory.console_token (
  token_hash bytea primary key check (octet_length(token_hash) = 32),
  issued_at  timestamptz not null default now(),
  expires_at timestamptz not null,
  spent_at   timestamptz,
  check (expires_at > issued_at)
);
comment on table inventory.console_token is 'One-time console sign-in links (mesh console token), stored hashed: the link itself is never kept.';
comment on column inventory.console_token.token_hash is 'sha256 of the secret in the link.';
comment on column inventory.console_token.issued_at is 'When it was issued.';
comment on column inventory.console_token.expires_at is 'After this the link signs nobody in.';
comment on column inventory.console_token.spent_at is 'When it was spent; set by the one statement that finds it, so a link signs in once.';

create table inventory.console_session (
  session_hash bytea primary key check (octet_length(session_hash) = 32),
  started_at   timestamptz not null default now(),
  expires_at   timestamptz not null,
  check (expires_at > started_at)
);
comment on table inventory.console_session is 'Console sessions a spent link opened, stored hashed: the cookie itself is never kept.';
comment on column inventory.console_session.session_hash is 'sha256 of the session cookie''s value.';
comment on column inventory.console_session.started_at is 'When the link was spent.';
comment on column inventory.console_session.expires_at is 'After this the cookie is refused and a new link is needed.';

/* Issue a sign-in link's token. Spent and expired ones are forgotten here,
   so the table holds only what can still be used. */
create function inventory.issue_console_token(token_hash bytea, ttl interval) returns timestamptz language plpgsql as $$
declare expires timestamptz := now() + ttl;
begin
  if ttl <= interval '0' then
    raise exception 'a sign-in link must live for some time, not %', ttl using errcode = 'MSH08';
  end if;
  delete from inventory.console_token t where t.spent_at is not null or t.expires_at <= now();
  delete from inventory.console_session s where s.expires_at <= now();
  insert into inventory.console_token (token_hash, expires_at) values (issue_console_token.token_hash, expires);
  return expires;
end $$;

/* Spend a link and open a session: one statement finds and marks the token,
   so of two browsers following one link exactly one is signed in (as E1).
   Unknown, spent and expired are one refusal: the person's remedy is the
   same, a new link. */
create function inventory.spend_console_token(token_hash bytea, session_hash bytea, session_ttl interval) returns timestamptz language plpgsql as $$
declare spent bytea; expires timestamptz := now() + session_ttl;
begin
  update inventory.console_token k set spent_at = now()
   where k.token_hash = spend_console_token.token_hash and k.spent_at is null and k.expires_at > now()
  returning k.token_hash into spent;
  if spent is null then
    raise exception 'that sign-in link is unknown, spent or expired' using errcode = 'MSH09',
      hint = 'a link signs in once: run mesh console token for a new one';
  end if;
  insert into inventory.console_session (session_hash, expires_at) values (spend_console_token.session_hash, expires);
  return expires;
end $$;

/* Is this cookie a session still open? Asked on every request. */
create function inventory.console_session_open(session_hash bytea) returns boolean language sql stable as $$
  select exists (select 1 from inventory.console_session s
                  where s.session_hash = console_session_open.session_hash and s.expires_at > now())
$$;

/* Tell the console when what inventory.node_status shows changed, and only
   then: a node appears, goes, moves site or endpoint, enrols, or is heard
   again after more than the 150 s of `here`; a report arrives with another
   serial, holdings or failures. The heard of a node already here (once a
   minute from every node) and a reconcile's report of the same holdings
   tell nothing: a notifying commit takes PostgreSQL's one notification
   lock, and a fleet's heards must not queue on it. A node falling out of
   touch changes no row at all: the console's clock catches that. */
create function inventory.notify_console() returns trigger language plpgsql as $$
begin
  perform pg_notify('mesh_inventory_changed', tg_table_name);
  return null;
end $$;

create trigger node_changed after insert or delete on inventory.node
  for each row execute function inventory.notify_console();
create trigger node_updated after update on inventory.node
  for each row when (old.site is distinct from new.site or old.dialable is distinct from new.dialable
                     or old.enrolled_at is distinct from new.enrolled_at
                     or (new.last_seen is not null and (old.last_seen is null or new.last_seen - old.last_seen > interval '150 seconds')))
  execute function inventory.notify_console();
create trigger report_changed after insert or delete on inventory.report
  for each row execute function inventory.notify_console();
create trigger report_updated after update on inventory.report
  for each row when (old.serial is distinct from new.serial or old.held is distinct from new.held or old.failed is distinct from new.failed)
  execute function inventory.notify_console();
