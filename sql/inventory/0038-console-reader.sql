-- The console's own role (P1): mesh_inventory_reader, made by
-- create_contexts.sql, reads what the console shows and writes nothing
-- itself. Signing in and out are the console's only writes; they run as
-- this context's owner through the two security-definer functions below,
-- which are the only ones of them the reader may call.

/* Every table and view of this context, and those later migrations make
   (they run as this context's owner, whose defaults these are). */
grant usage on schema inventory to mesh_inventory_reader;
grant select on all tables in schema inventory to mesh_inventory_reader;
alter default privileges in schema inventory grant select on tables to mesh_inventory_reader;

/* Spend a link and open a session: one statement finds and marks the token,
   so of two browsers following one link exactly one is signed in (as E1).
   Unknown, spent and expired are one refusal: the person's remedy is the
   same, a new link. Security definer: the console's reader may not write
   the token and session tables, only spend a link through this. */
create or replace function inventory.spend_console_token(token_hash bytea, session_hash bytea, session_ttl interval) returns timestamptz
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
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
revoke execute on function inventory.spend_console_token(bytea, bytea, interval) from public;
grant execute on function inventory.spend_console_token(bytea, bytea, interval) to mesh_inventory_reader;
comment on function inventory.spend_console_token(bytea, bytea, interval) is 'Sign in: spends a console link once and opens a session; the console''s reader calls it and may write nothing else.';

/* Close the session whose cookie hashes to SESSION_HASH; closing one that is
   unknown or already closed is not an error (signing out twice is one
   sign-out). Security definer, as spend_console_token. */
create or replace function inventory.close_console_session(session_hash bytea) returns void
language sql security definer set search_path = pg_catalog, pg_temp as $$
  delete from inventory.console_session s where s.session_hash = close_console_session.session_hash
$$;
revoke execute on function inventory.close_console_session(bytea) from public;
grant execute on function inventory.close_console_session(bytea) to mesh_inventory_reader;
comment on function inventory.close_console_session(bytea) is 'Sign out: the console session of this cookie hash is closed.';
