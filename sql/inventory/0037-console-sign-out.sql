-- Signing out of the console: the session a cookie opened is closed in the
-- store, so the cookie is refused from then on wherever it was copied.

/* Close the session whose cookie hashes to SESSION_HASH; closing one that is
   unknown or already closed is not an error (signing out twice is one sign-out). */
create function inventory.close_console_session(session_hash bytea) returns void language sql as $$
  delete from inventory.console_session s where s.session_hash = close_console_session.session_hash
$$;
comment on function inventory.close_console_session(bytea) is 'Sign out: the console session of this cookie hash is closed.';
