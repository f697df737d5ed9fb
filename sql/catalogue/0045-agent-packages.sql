-- Agent packages (V2). A mesh-host package the fleet may be upgraded to is
-- kept here, whole, in chunks: the control plane hands a node its bytes over
-- the broker (the node asks for a few chunks at a time, serve answers on the
-- node's own queue), so nothing listens on a node for it and no new port is
-- opened anywhere. The sha256 named here is what the signed declaration
-- carries; the host checks the bytes against it before unpacking a byte.

create table catalogue.agent_package (
  version  text primary key check (version ~ '^[0-9]{1,9}\.[0-9]{1,9}\.[0-9]{1,9}(-[0-9A-Za-z.-]{1,40})?$'),
  sha256   text not null unique check (sha256 ~ '^[0-9a-f]{64}$'),
  size     bigint not null check (size > 0),
  chunks   integer not null check (chunks > 0),
  added_at timestamptz not null default now()
);
comment on table catalogue.agent_package is 'Each mesh-host package a fleet may run: its version, the sha256 and size of its bytes, and how many chunks hold them.';
comment on column catalogue.agent_package.version is 'The mesh-host version the package installs, as its agent reports it.';
comment on column catalogue.agent_package.sha256 is 'Hex sha256 of the whole package: what the declaration carries and the host checks.';
comment on column catalogue.agent_package.size is 'Bytes in the whole package.';
comment on column catalogue.agent_package.chunks is 'How many rows of agent_chunk hold the bytes, numbered from 0.';

create table catalogue.agent_chunk (
  sha256 text not null references catalogue.agent_package (sha256) on delete cascade,
  n      integer not null check (n >= 0),
  bytes  bytea not null,
  primary key (sha256, n)
);
comment on table catalogue.agent_chunk is 'The bytes of each agent package, in order: what serve hands a node a few at a time.';
comment on column catalogue.agent_chunk.n is 'Its place in the package, from 0.';

/* Add a package; its chunks follow in the same transaction (put_agent_chunk).
   The same version with the same bytes is nothing new (false: no chunks are
   owed); the same version with other bytes is refused: a version names one
   package, or two nodes "on 0.2.0" could run different code. */
create function catalogue.add_agent_package(package_version text, package_sha256 text, package_size bigint, chunk_count integer)
returns boolean language plpgsql as $$
declare was catalogue.agent_package;
begin
  select * into was from catalogue.agent_package p where p.version = package_version;
  if found then
    if was.sha256 = package_sha256 then return false; end if;
    raise exception 'mesh-host % was added before with other bytes (sha256 %)', package_version, was.sha256
      using errcode = 'MSHZ0', hint = 'a version names one package: build the new one with a new version';
  end if;
  insert into catalogue.agent_package (version, sha256, size, chunks)
    values (package_version, package_sha256, package_size, chunk_count);
  return true;
end $$;

/* One chunk of a package just added. */
create function catalogue.put_agent_chunk(package_sha256 text, chunk_n integer, chunk bytea) returns void language sql as $$
  insert into catalogue.agent_chunk (sha256, n, bytes) values (package_sha256, chunk_n, chunk)
$$;

create view catalogue.agent_packages as select version, sha256, size, chunks, added_at from catalogue.agent_package;
comment on view catalogue.agent_packages is 'Each agent package and its sha256 and size: what assignment declares a node to run.';
grant select on catalogue.agent_packages to mesh_assignment;
