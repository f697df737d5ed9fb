-- The rule `mesh broker add` kept in TypeScript, moved where the rules live:
-- while inventory.broker is empty the home's broker (broker.json) is the whole
-- list, implicitly; the first broker added must record it beside the new one,
-- or every node would be declared a list without the broker it is on. SQL
-- cannot read broker.json, so the caller passes the home's address and
-- fingerprint on every put, and put_broker decides here, under the same
-- transaction, whether they are needed. Fingerprints are upper-cased here
-- too, as Node and openssl print them, whatever case was pasted.

drop function inventory.put_broker(text, text, text);

/* Add a broker, or change what the mesh knows of it: outcome 'added',
   'changed' (a new fingerprint is a certificate change, declared to every
   node like any other change) or 'unchanged'; fingerprint as stored;
   home_recorded when this put found the table empty and recorded the home's
   broker first. The home is required on every put, not only the first: no
   caller can leave it out by knowing (or guessing wrong) that rows exist.
   Two first puts at once both find the table empty; the home's insert is
   idempotent, so the home is recorded once and said by the one that wrote it. */
create function inventory.put_broker(address text, fingerprint text, home_address text, home_fingerprint text, node_name text default null,
                                     out outcome text, out fingerprint_pinned text, out home_recorded boolean)
language plpgsql as $$
declare
  fp constant text := upper(btrim(fingerprint));
  home_fp constant text := upper(btrim(home_fingerprint));
  was inventory.broker;
begin
  home_recorded := false;
  fingerprint_pinned := fp;
  perform inventory.check_broker(address, fp);
  perform inventory.check_broker(home_address, home_fp);
  if node_name is not null and not exists (select 1 from inventory.node n where n.name = node_name and n.enrolled_at is not null) then
    raise exception 'node % is not enrolled, so it cannot run broker %', node_name, address using errcode = 'MSH13',
      hint = 'enrol it first (mesh token issue NAME, then mesh-host enrol on it), or leave out --node; see mesh node list';
  end if;
  if home_address <> address and not exists (select 1 from inventory.broker) then
    insert into inventory.broker (address, fingerprint) values (home_address, home_fp)
    on conflict on constraint broker_pkey do nothing;
    home_recorded := found;
  end if;
  select * into was from inventory.broker b where b.address = put_broker.address for update;
  if not found then
    insert into inventory.broker (address, fingerprint, node) values (put_broker.address, fp, node_name)
    on conflict on constraint broker_pkey do nothing;
    -- A concurrent add of the same address won the insert: this one is a put over it.
    if found then outcome := 'added'; return; end if;
    select * into was from inventory.broker b where b.address = put_broker.address for update;
  end if;
  if was.fingerprint = fp and was.node is not distinct from node_name then outcome := 'unchanged'; return; end if;
  update inventory.broker b set fingerprint = fp, node = node_name where b.address = put_broker.address;
  outcome := 'changed';
end $$;
comment on function inventory.put_broker(text, text, text, text, text) is 'Add a broker or change its fingerprint or node: added, changed or unchanged, with the fingerprint as stored (upper-case) and whether the home''s broker (HOME_ADDRESS, HOME_FINGERPRINT from broker.json) was recorded first because the table was empty. Refuses a malformed address (MSH10) or fingerprint (MSH11), its own or the home''s, and a node that is not enrolled (MSH13).';
