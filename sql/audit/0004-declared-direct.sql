-- A declaration's history row is inserted by its trigger directly, not through
-- audit.append (issue 17, bench 3). Why: `declare --all` fires this deferred
-- trigger 10,000 times at its commit, and each call of append (a SQL function
-- with SET and security definer) parsed and planned its insert again; a
-- PL/pgSQL insert keeps its plan for the session. The row is the same one
-- (kind, node, detail), chained by audit.chain() as every other row (C3).
create or replace function audit.on_declaration() returns trigger language plpgsql security definer set search_path = pg_catalog, audit as $$
begin
  insert into audit.event (kind, node, detail)
  values ('declared', new.node, jsonb_build_object('serial', new.serial, 'digest', encode(new.digest, 'hex')));
  return null;
end $$;
