-- One code, one meaning (issue 16): check_holders raised MSH44 for "no
-- holder" and for "holders and keys differ", MSH41 for "not enrolled" and for
-- "its key changed while sealing". The second of each is MSH45 and MSH43 now;
-- every code and its remedy is listed in src/store/errors.ts.

/* Check that every (holder, key) pair names an enrolled node by its current
   sealing key. A secret sealed to a key the node no longer holds is a secret
   nobody can open, so storing it would be a rotation that only looks done. */
create or replace function secret.check_holders(holders text[], sealed_to text[]) returns void language plpgsql stable as $$
declare h text; k text; now_key bytea;
begin
  if coalesce(array_length(holders, 1), 0) = 0 then
    raise exception 'a secret needs at least one holder' using errcode = 'MSH44',
      hint = 'assign the modules that use it to a node first (mesh assign MODULE NODE)';
  end if;
  if array_length(holders, 1) <> coalesce(array_length(sealed_to, 1), 0) then
    raise exception 'holders and keys differ in number' using errcode = 'MSH45',
      hint = 'seal the value once per holder, to that holder''s key';
  end if;
  for h, k in select * from unnest(holders, sealed_to) loop
    select e.sealing_key into now_key from inventory.enrolled_node e where e.name = h;
    if now_key is null then
      raise exception 'node % cannot be resolved: it is not enrolled, so it has no sealing key', h using errcode = 'MSH41',
        hint = 'nothing was changed and the old secret keeps working; enrol the node again, or unassign it (see mesh node list)';
    end if;
    if now_key <> decode(k, 'hex') then
      raise exception 'node %''s sealing key changed while the secret was being sealed', h using errcode = 'MSH43',
        hint = 'nothing was changed; run the command again';
    end if;
  end loop;
end $$;
