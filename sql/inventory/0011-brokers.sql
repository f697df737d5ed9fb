-- Hosts that know more than one broker (issue 19.2). The brokers a node may
-- dial, each with the certificate fingerprint it pins. An empty table is the
-- mesh of one broker, the first node's (MESH_HOME/broker.json), which every
-- identity and token already carries: nothing is declared about brokers
-- until an operator adds one (mesh broker add), so an existing mesh's
-- compositions do not change. Once there are rows they are the whole list,
-- the home's own broker among them (the CLI records it with the first add),
-- and every node's declaration carries it (assignment.compose_each).

create table inventory.broker (
  address     text primary key check (case when address ~ '^[A-Za-z0-9.-]{1,253}:[0-9]{1,5}$' then split_part(address, ':', 2)::integer between 1 and 65535 else false end),
  fingerprint text not null check (fingerprint ~ '^([0-9A-F]{2}:){31}[0-9A-F]{2}$'),
  node        text references inventory.node (name) on delete set null,
  added_at    timestamptz not null default now()
);
comment on table inventory.broker is 'The broker nodes hosts may dial, tried in turn (address order is the declared order). Empty: the only broker is the home''s (broker.json public and fingerprint).';
comment on column inventory.broker.address is 'HOST:PORT a node dials over TLS (AMQPS).';
comment on column inventory.broker.fingerprint is 'SHA-256 of the broker node''s certificate as Node''s X509Certificate.fingerprint256 prints it (upper-case hex pairs joined by colons); hosts pin it.';
comment on column inventory.broker.node is 'The mesh node that runs this broker node, if any (its firewall admits the other broker nodes); null when the broker runs outside the mesh or on a retired node.';
comment on column inventory.broker.added_at is 'When it was first recorded.';

/* The address and fingerprint rules said as refusals of their own, before
   the row's checks would say them as a bare constraint violation. */
create function inventory.check_broker(address text, fingerprint text) returns void language plpgsql immutable as $$
begin
  -- CASE, not OR: the port is cast only once the pattern held.
  if not coalesce(case when address ~ '^[A-Za-z0-9.-]{1,253}:[0-9]{1,5}$' then split_part(address, ':', 2)::integer between 1 and 65535 end, false) then
    raise exception 'broker address % is not HOST:PORT', coalesce(quote_literal(address), 'null') using errcode = 'MSH10',
      hint = 'give the address nodes dial over TLS as HOST:PORT, e.g. mq2.example.net:5671';
  end if;
  if fingerprint is null or fingerprint !~ '^([0-9A-F]{2}:){31}[0-9A-F]{2}$' then
    raise exception 'broker fingerprint % is not a SHA-256 fingerprint', coalesce(quote_literal(fingerprint), 'null') using errcode = 'MSH11',
      hint = 'give the certificate''s SHA-256 as 32 upper-case hex pairs joined by colons: openssl x509 -noout -fingerprint -sha256 -in CERT';
  end if;
end $$;

/* Add a broker, or change what the mesh knows of it. Returns 'added',
   'changed' (its fingerprint or node changed: a new fingerprint is a
   certificate change, declared to every node like any other change) or
   'unchanged'. The node that runs it must be enrolled: a name the mesh does
   not know would open firewalls for nobody. */
create function inventory.put_broker(address text, fingerprint text, node_name text default null) returns text language plpgsql as $$
declare
  was inventory.broker;
begin
  perform inventory.check_broker(address, fingerprint);
  if node_name is not null and not exists (select 1 from inventory.node n where n.name = node_name and n.enrolled_at is not null) then
    raise exception 'node % is not enrolled, so it cannot run broker %', node_name, address using errcode = 'MSH13',
      hint = 'enrol it first (mesh token issue NAME, then mesh-host enrol on it), or leave out --node; see mesh node list';
  end if;
  select * into was from inventory.broker b where b.address = put_broker.address for update;
  if not found then
    insert into inventory.broker (address, fingerprint, node) values (put_broker.address, put_broker.fingerprint, node_name)
    on conflict on constraint broker_pkey do nothing;
    -- A concurrent add of the same address won the insert: this one is a put over it.
    if found then return 'added'; end if;
    select * into was from inventory.broker b where b.address = put_broker.address for update;
  end if;
  if was.fingerprint = put_broker.fingerprint and was.node is not distinct from node_name then return 'unchanged'; end if;
  update inventory.broker b set fingerprint = put_broker.fingerprint, node = node_name where b.address = put_broker.address;
  return 'changed';
end $$;
comment on function inventory.put_broker(text, text, text) is 'Add a broker or change its fingerprint or node: added, changed or unchanged. Refuses a malformed address (MSH10) or fingerprint (MSH11) and a node that is not enrolled (MSH13).';

/* Forget a broker. Never the last one: every node's declaration carries the
   list, and a mesh with none declared would leave each host with whatever it
   held last, the removed broker too. All rows are locked first, so of two
   removals racing for the last two brokers one waits and is refused. */
create function inventory.remove_broker(address text) returns void language plpgsql as $$
begin
  perform 1 from inventory.broker for update;
  if not exists (select 1 from inventory.broker b where b.address = remove_broker.address) then
    raise exception 'the mesh knows no broker %', coalesce(quote_literal(address), 'null') using errcode = 'MSH14',
      hint = 'see mesh broker list for the addresses it knows';
  end if;
  if (select count(*) from inventory.broker) = 1 then
    raise exception 'broker % is the last broker of the mesh', address using errcode = 'MSH12',
      hint = 'add the broker that replaces it first (mesh broker add HOST:PORT --fingerprint FP), then remove this one';
  end if;
  delete from inventory.broker b where b.address = remove_broker.address;
end $$;
comment on function inventory.remove_broker(text) is 'Forget a broker. Refuses one the mesh does not know (MSH14) and the last one (MSH12).';

create view inventory.broker_nodes as select address, fingerprint, node from inventory.broker;
comment on view inventory.broker_nodes is 'The brokers hosts may dial with the fingerprints they pin, and the mesh node running each (null: outside the mesh). Empty: the home''s broker is the only one and nothing is declared about brokers.';
grant select on inventory.broker_nodes to mesh_assignment, mesh_overlay;

-- The audit context hangs its trigger here: which brokers nodes were told to
-- trust, and when, is history (C3). It is granted TRIGGER only.
grant trigger on inventory.broker to mesh_audit;
