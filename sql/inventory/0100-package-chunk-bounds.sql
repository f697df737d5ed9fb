-- P2 for agent packages (V2): what one node can make serve read and publish
-- of a package's chunks. A node asks for a few chunks at a time; each ask
-- would have serve read up to a few MiB from the store and publish them on
-- the node's queue. Each chunk is handed to a node at most once per
-- bounds_setting.answer_every (the interval recover and rekey answers keep):
-- an ask whose every chunk was handed to that node within it is refused
-- (MSHZ9) before a byte is read, and the chunks handed before stand. So a
-- node asking in a loop costs serve at most the package once per interval,
-- and a host that lost a chunk on the way has it again when it asks after the
-- interval (it asks again every few seconds by itself). Other nodes are
-- answered as before: the bound is each node's own.

create table inventory.chunk_handed (
  node      text not null references inventory.node (name) on delete cascade,
  sha256    text not null,
  n         integer not null check (n >= 0),
  handed_at timestamptz not null default now(),
  primary key (node, sha256, n)
);
comment on table inventory.chunk_handed is 'Which chunks of which agent package each node was handed, and when: each is handed again only after bounds_setting.answer_every (P2).';
comment on column inventory.chunk_handed.node is 'The node handed the chunk.';
comment on column inventory.chunk_handed.sha256 is 'The package: its hex sha256, as catalogue.agent_package names it.';
comment on column inventory.chunk_handed.n is 'The chunk, numbered from 0.';
comment on column inventory.chunk_handed.handed_at is 'When it was handed (marked as it is taken, before it is read and published).';

/* Which of the chunks FIRST_CHUNK to LAST_CHUNK of package PACKAGE_SHA256 may
   NODE be handed now: those not handed to it within
   bounds_setting.answer_every, marked handed now and returned in order. The
   node's marks past the interval are pruned first, so a node keeps at most
   the chunks of the interval. Refused (MSHZ9) when every chunk asked was
   handed within it: serve then reads and publishes nothing. The caller keeps
   the range within the package's chunks. */
create function inventory.take_chunks(node_name text, package_sha256 text, first_chunk integer, last_chunk integer)
returns integer[] language plpgsql as $$
declare
  every interval := (select answer_every from inventory.bounds_setting);
  taken integer[];
begin
  delete from inventory.chunk_handed h where h.node = node_name and h.handed_at <= now() - every;
  with put as (
    insert into inventory.chunk_handed (node, sha256, n)
    select node_name, package_sha256, g.n from generate_series(first_chunk, last_chunk) g(n)
    on conflict (node, sha256, n) do nothing
    returning n)
  select coalesce(array_agg(put.n order by put.n), '{}') into taken from put;
  if cardinality(taken) = 0 then
    raise exception '% asked again for chunks % to % of package %, every one handed to it within %', node_name,
      first_chunk, last_chunk, left(package_sha256, 12), every
      using errcode = 'MSHZ9', hint = 'nothing was read or sent again; the chunks handed before stand, and the host asks again after the interval by itself';
  end if;
  return taken;
end $$;
