-- V3: a store behind its nodes continues their serials above what they applied.
--
-- A store restored from a backup knows only the declarations issued before the
-- backup was taken; the nodes went on applying newer ones, and each keeps the
-- highest serial it applied (D2) and refuses anything not above it. Left as it
-- is, the restored store would issue the very serials the nodes already hold,
-- and every node would refuse the mesh as a replay. The nodes say their highest
-- applied serial when they ask for their declaration (recover), and this is
-- where the store takes it: the node's count moves up to it, so the next
-- declaration is above it. The same holds for any store that lost its newest
-- commits (a standby promoted without them).

/* NODE_NAME says it applied serial APPLIED. Where that is above every serial
   this store issued it, the store is behind the node: its count is raised to
   APPLIED, so the next declaration takes APPLIED + 1. True while the newest
   declaration this store holds for the node is below APPLIED: the caller
   declares the node again (asked again after a failed declare, it is still
   true, though the count was raised the first time). It only raises, and
   only the node's own count: a node that overstates only skips serials of its
   own. A serial outside what a host reads exactly (a JavaScript safe integer,
   less room for the serials after it) is refused (MSHR0). */
create function assignment.continue_serials(node_name text, applied bigint) returns boolean language plpgsql as $$
begin
  if applied is null or applied < 0 or applied > 9007199254740991 - 1048576 then
    raise exception 'node % says it applied serial %, outside 0 to 2^53 - 2^20', node_name, applied
      using errcode = 'MSHR0', hint = 'a host reads serials as exact whole numbers: its serial.json is damaged; see mesh-host''s log';
  end if;
  if not exists (select 1 from assignment.declarable(array[node_name])) then
    return false; -- enrolled after the backup: unknown here, it enrols again
  end if;
  insert into assignment.node_serial as s (node, serial)
  select node_name, applied where applied > 0
  on conflict (node) do update set serial = excluded.serial where s.serial < excluded.serial;
  return coalesce((select max(d.serial) from assignment.declaration d where d.node = node_name), 0) < applied;
end $$;
revoke execute on function assignment.continue_serials(text, bigint) from public;
