-- P2: what one node can make the control plane answer, keep or retry.
--
-- A node decides how often it asks and what it says; the store decides what
-- that costs. Four bounds, each on one node:
--
-- * recover and rekey are answered the same at most once per node per
--   interval (bounds_setting.answer_every): each answer signs and publishes
--   (recover hands back the newest declaration and the last report) or
--   re-declares the node's peers (rekey), so a node asking in a loop would
--   make serve sign, publish and compose in a loop. One asked again within
--   the interval, with nothing new to answer, is refused (MSHS3); the answer
--   given before stands. Something new (a newer declaration) is answered at once.
-- * a message serve cannot record after a few tries is set aside in
--   inventory.dead_letter with the reason, readable in inventory.dead_letters,
--   instead of going back to the queue every second for ever. A node keeps its
--   newest bounds_setting.letters_kept there; older ones go.
-- * corrections (D6) are kept for drift_setting.kept_for and pruned past it,
--   so drift counts what happened within that window and no node grows the
--   table without end.
-- * refusals are folded by kind: a refusal whose kind the node already said
--   within bounds_setting.fold_refusals is counted on its row (times), not
--   kept again, whatever its reason or serial; the history, which keeps a
--   refusal only when times is 1, gets at most one row per node and kind per
--   window however the reasons vary.

create table inventory.bounds_setting (
  one            boolean primary key default true check (one),
  answer_every   interval not null default '15 seconds' check (answer_every >= interval '0'),
  letters_kept   integer not null default 16 check (letters_kept > 0),
  fold_refusals  interval not null default '1 hour' check (fold_refusals >= interval '0')
);
comment on table inventory.bounds_setting is 'One row: what one node may make the control plane answer, keep or retry (P2).';
comment on column inventory.bounds_setting.one is 'There is exactly one row.';
comment on column inventory.bounds_setting.answer_every is 'A recover or rekey is answered at most once per node within this; one asked again sooner is refused (MSHS3).';
comment on column inventory.bounds_setting.letters_kept is 'Messages set aside kept per node (inventory.dead_letter): the newest; older ones go.';
comment on column inventory.bounds_setting.fold_refusals is 'A refusal of a kind the node said within this is counted on its row, not kept again (nor in the history).';
insert into inventory.bounds_setting default values;

create table inventory.answered (
  node        text not null references inventory.node (name) on delete cascade,
  kind        text not null check (kind in ('recover', 'rekey')),
  answer      text not null,
  answered_at timestamptz not null default now(),
  primary key (node, kind)
);
comment on table inventory.answered is 'What each node was last answered to a recover or a rekey, and when: the same answer is given again only after bounds_setting.answer_every.';
comment on column inventory.answered.node is 'The node answered.';
comment on column inventory.answered.kind is 'recover or rekey.';
comment on column inventory.answered.answer is 'A digest of what it was answered (the declaration and report handed back, the key recorded).';
comment on column inventory.answered.answered_at is 'When it was last answered.';

/* May NODE be answered a KIND (recover, rekey) of ANSWER (a digest of what
   would be handed back) now? Refused (MSHS3) when it was given that same
   answer within bounds_setting.answer_every: a different answer (a newer
   declaration since, another key) is given at once, so a host that missed
   one never waits for it. Only asks: the answer is marked by mark_answered
   once given, so one lost before it went out is given again on redelivery. */
create function inventory.check_answer(node_name text, answer_kind text, answer_digest text) returns void language plpgsql stable as $$
declare
  last timestamptz;
  every interval;
begin
  select a.answered_at, s.answer_every into last, every
    from inventory.answered a cross join inventory.bounds_setting s
   where a.node = node_name and a.kind = answer_kind and a.answer = answer_digest;
  if last is not null and last > now() - every then
    raise exception '% asked for a % again % after the same answer, within %', node_name, answer_kind,
      date_trunc('second', now() - last), every
      using errcode = 'MSHS3', hint = 'the answer given before stands; the same is given again after the interval, a new one at once';
  end if;
end $$;

/* NODE was answered a KIND of ANSWER now. A node not enrolled is not kept. */
create function inventory.mark_answered(node_name text, answer_kind text, answer_digest text) returns void language sql as $$
  insert into inventory.answered (node, kind, answer)
  select node_name, answer_kind, answer_digest where exists (select 1 from inventory.node n where n.name = node_name)
  on conflict (node, kind) do update set answer = excluded.answer, answered_at = now()
$$;

/* How long after answering a node may ask again. */
create function inventory.set_answer_every(every interval) returns interval language sql as $$
  update inventory.bounds_setting set answer_every = every returning answer_every
$$;

create table inventory.dead_letter (
  id           bigint generated always as identity primary key,
  node         text not null,
  kind         text not null,
  message_id   text,
  reason       text not null,
  tries        integer not null check (tries > 0),
  body         bytea not null,
  set_aside_at timestamptz not null default now()
);
comment on table inventory.dead_letter is 'Messages mesh serve could not record after a few tries, set aside with why (P2): never retried by serve; read inventory.dead_letters.';
comment on column inventory.dead_letter.id is 'Its number, in the order set aside.';
comment on column inventory.dead_letter.node is 'The node (or builder) account that sent it, without the broker prefix.';
comment on column inventory.dead_letter.kind is 'Its routing key: report, recover, rekey, enrol, build.result.';
comment on column inventory.dead_letter.message_id is 'The message id its sender gave, if any.';
comment on column inventory.dead_letter.reason is 'Why the last try failed, as the store or serve said it.';
comment on column inventory.dead_letter.tries is 'How many times serve tried before setting it aside.';
comment on column inventory.dead_letter.body is 'The message as it came, to read or send again by hand.';
comment on column inventory.dead_letter.set_aside_at is 'When it was set aside.';
create index dead_letter_by_node on inventory.dead_letter (node, id);

/* Serve could not record a message after TRIES tries: keep it with why, and
   keep only the node's newest bounds_setting.letters_kept. Returns its id. */
create function inventory.set_aside(node_name text, message_kind text, sent_id text, why text, tried integer, message bytea)
returns bigint language plpgsql as $$
declare
  n bigint;
begin
  insert into inventory.dead_letter (node, kind, message_id, reason, tries, body)
  values (node_name, message_kind, sent_id, why, tried, message) returning id into n;
  delete from inventory.dead_letter d
   where d.node = node_name
     and d.id < (select min(k.id) from (select id from inventory.dead_letter where node = node_name
                                          order by id desc limit (select letters_kept from inventory.bounds_setting)) k);
  return n;
end $$;

create view inventory.dead_letters as
select d.id, d.node, d.kind, d.message_id, d.reason, d.tries, octet_length(d.body) as bytes, d.set_aside_at
  from inventory.dead_letter d;
comment on view inventory.dead_letters is 'What mesh serve set aside, newest last: a message it could not record after a few tries, with why (P2).';
comment on column inventory.dead_letters.id is 'Its number, in the order set aside.';
comment on column inventory.dead_letters.node is 'The account that sent it, without the broker prefix.';
comment on column inventory.dead_letters.kind is 'Its routing key.';
comment on column inventory.dead_letters.message_id is 'The message id its sender gave, if any.';
comment on column inventory.dead_letters.reason is 'Why the last try failed.';
comment on column inventory.dead_letters.tries is 'How many tries before it was set aside.';
comment on column inventory.dead_letters.bytes is 'Its size; the message itself is inventory.dead_letter.body.';
comment on column inventory.dead_letters.set_aside_at is 'When it was set aside.';

-- Corrections kept for a window, not for ever.
alter table inventory.drift_setting
  add column kept_for interval not null default '1 day' check (kept_for >= interval '1 hour');
comment on column inventory.drift_setting.kept_for is 'Corrections older than this are pruned when the node next reports one (at least an hour: fighting counts the last hour).';
comment on column inventory.drift.times is 'How often within drift_setting.kept_for (older corrections are pruned).';

/* Count what a report says was put back, and prune the node's corrections
   past drift_setting.kept_for. One insert for the whole list, and the report
   handler calls it only when the list is not empty: the report path is the
   busiest write the mesh has. A report from a node that is not enrolled
   counts nothing (record_report refuses it on its own). */
create or replace function inventory.record_corrections(node_name text, resources text[]) returns integer language sql as $$
  with pruned as (
    delete from inventory.correction c
     where c.node = node_name and c.corrected_at < now() - (select kept_for from inventory.drift_setting)),
  added as (
    insert into inventory.correction (node, resource)
    select node_name, r from unnest(resources) r
     where exists (select 1 from inventory.node n where n.name = node_name and n.enrolled_at is not null)
    returning 1)
  select count(*)::int from added
$$;

-- Refusals folded by kind within a window.
create table inventory.refusal_said (
  node  text not null references inventory.node (name) on delete cascade,
  fault text not null,
  since timestamptz not null default now(),
  times integer not null default 1 check (times > 0),
  primary key (node, fault)
);
comment on table inventory.refusal_said is 'Each kind of refusal each node said, since when and how often within bounds_setting.fold_refusals: the fold that keeps the history to one row per node and kind per window.';
comment on column inventory.refusal_said.node is 'The host that refused.';
comment on column inventory.refusal_said.fault is 'The kind: forged, malformed, replayed or stale.';
comment on column inventory.refusal_said.since is 'When the window began: the refusal of this kind the history kept.';
comment on column inventory.refusal_said.times is 'How many of this kind since then (1: the one the history kept).';

comment on column inventory.refusal.times is 'How many times the host said a refusal of this kind within bounds_setting.fold_refusals of the first (1: new, and kept by the history), whatever the reason or serial.';
comment on column inventory.refusal.first_at is 'When the host first said a refusal of this kind in the window.';

/* A host refused a declaration (R3): last_seen moves, the refusal is kept as
   the node's last one, and nothing of its last report changes. A refusal of
   a kind the node said within bounds_setting.fold_refusals is counted (times
   above 1: the history keeps none of it), whatever its reason or serial, so
   a node varying its reasons, or alternating kinds, adds at most one history
   row per kind per window. Returns how many times the node has now said this
   kind in the window (1: a new refusal), or 0 for a node that is not enrolled
   (nothing is kept). */
create or replace function inventory.record_refusal(node_name text, refused_serial bigint, refusal_fault text, refusal_reason text)
returns integer language plpgsql as $$
declare
  said_fault text := refusal_fault;
  said_reason text := refusal_reason;
  n integer;
  began timestamptz;
begin
  -- An agent from before replayed was a kind of its own: its replays said as forged.
  if said_fault = 'forged' and said_reason like 'replayed: %' then
    said_fault := 'replayed';
    said_reason := substr(said_reason, length('replayed: ') + 1);
  end if;
  update inventory.node set last_seen = now() where name = node_name and enrolled_at is not null;
  if not found then return 0; end if;
  insert into inventory.refusal_said as s (node, fault) values (node_name, said_fault)
  on conflict (node, fault) do update
     set times = case when s.since > now() - (select fold_refusals from inventory.bounds_setting) then s.times + 1 else 1 end,
         since = case when s.since > now() - (select fold_refusals from inventory.bounds_setting) then s.since else now() end
  returning s.times, s.since into n, began;
  insert into inventory.refusal as x (node, serial, fault, reason, times, first_at)
  values (node_name, refused_serial, said_fault, said_reason, n, began)
  on conflict (node) do update
     set times      = excluded.times,
         first_at   = excluded.first_at,
         serial     = excluded.serial,
         fault      = excluded.fault,
         reason     = excluded.reason,
         refused_at = now();
  return n;
end $$;
