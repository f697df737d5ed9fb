-- A refusal is kept as its kind, and one said again is counted, not written again.
--
-- A host refuses a declaration as one of four kinds, and they mean different
-- things to an operator: forged (not signed by this mesh's key, or for another
-- mesh or node: somebody is trying), malformed (not of its form: something
-- needs fixing), replayed (the mesh's own genuine declaration, not newer than
-- the one applied: at-least-once delivery brought it back, D2) and stale
-- (genuine, expired before it arrived, C2). inventory.refusal takes those four
-- and no other. A host whose agent predates replayed as a kind of its own says
-- a replay as forged with a reason beginning 'replayed: '; record_refusal keeps
-- that as replayed, so forged keeps meaning somebody is trying.
--
-- The same refusal said again by the same node (the same fault, serial and
-- reason as its last: one old declaration redelivered, a kept file refused at
-- every start) is folded into the node's row: times counts it, first_at says
-- when it was first said and refused_at when last. The history (audit/0005)
-- gets one row when a refusal is first said, none for its repeats, so a node
-- cannot fill the history by saying one thing over and over (P2).

alter table inventory.refusal
  add column times integer not null default 1 check (times > 0),
  add column first_at timestamptz not null default now();
-- Checked for every refusal recorded from now on; a row kept before keeps the word its host used.
alter table inventory.refusal
  add constraint refusal_fault_kind check (fault in ('forged', 'malformed', 'replayed', 'stale')) not valid;
comment on table inventory.refusal is 'The last declaration each host refused, as it said it, with how many times in a row; the audit history keeps each refusal once, when first said.';
comment on column inventory.refusal.fault is 'forged (another key, mesh or node), malformed (not of its form), replayed (the mesh''s own, not newer than the one applied) or stale (expired on arrival).';
comment on column inventory.refusal.refused_at is 'When the host last said it.';
comment on column inventory.refusal.times is 'How many times in a row the host said this same refusal (fault, serial and reason): 1 when it is new.';
comment on column inventory.refusal.first_at is 'When the host first said it (for a row kept before refusals were counted: when counting began).';

drop function inventory.record_refusal(text, bigint, text, text);

/* A host refused a declaration (R3): last_seen moves, the refusal is kept as
   the node's last one, and nothing of its last report changes. The same
   refusal as the node's last (fault, serial and reason) is counted on that
   row rather than kept again. Returns how many times in a row the node has
   now said it (1: a new refusal), or 0 for a node that is not enrolled
   (nothing is kept). */
create function inventory.record_refusal(node_name text, refused_serial bigint, refusal_fault text, refusal_reason text)
returns integer language plpgsql as $$
declare
  said_fault text := refusal_fault;
  said_reason text := refusal_reason;
  n integer;
begin
  -- An agent from before replayed was a kind of its own: its replays said as forged.
  if said_fault = 'forged' and said_reason like 'replayed: %' then
    said_fault := 'replayed';
    said_reason := substr(said_reason, length('replayed: ') + 1);
  end if;
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null;
  if not found then return 0; end if;
  insert into inventory.refusal as x (node, serial, fault, reason) values (node_name, refused_serial, said_fault, said_reason)
  on conflict (node) do update
     set times      = case when (x.serial, x.fault, x.reason) is not distinct from (excluded.serial, excluded.fault, excluded.reason)
                           then x.times + 1 else 1 end,
         first_at   = case when (x.serial, x.fault, x.reason) is not distinct from (excluded.serial, excluded.fault, excluded.reason)
                           then x.first_at else now() end,
         serial     = excluded.serial,
         fault      = excluded.fault,
         reason     = excluded.reason,
         refused_at = now()
  returning x.times into n;
  return n;
end $$;
