-- here_since (0016) is kept by a trigger on every update of last_seen, and
-- moves only when a node comes back after 150 s of silence (or is heard
-- first). That condition is now the trigger's WHEN, which PostgreSQL checks
-- without calling a function: a fleet's steady heards (a million nodes,
-- 16,667 a second) no longer run a PL/pgSQL call a row to change nothing.
-- The function only sets the column: the rule lives in one place.
create or replace function inventory.keep_here_since() returns trigger language plpgsql as $$
begin
  new.here_since := new.last_seen;
  return new;
end $$;
drop trigger node_here_since on inventory.node;
create trigger node_here_since before update of last_seen on inventory.node
  for each row
  when (new.last_seen is not null and (old.last_seen is null or new.last_seen - old.last_seen > interval '150 seconds'))
  execute function inventory.keep_here_since();
