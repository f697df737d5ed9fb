-- inventory: the machines of the mesh, how they join, when they were last heard.

create table inventory.node (
  name         text primary key check (name ~ '^[a-z][a-z0-9-]{0,62}$'),
  site         text not null default 'default' check (site ~ '^[a-z][a-z0-9-]{0,62}$'),
  dialable     text check (dialable ~ '^[A-Za-z0-9.-]{1,253}:[0-9]{1,5}$'),
  identity_key bytea check (octet_length(identity_key) = 32),
  overlay_key  bytea check (octet_length(overlay_key) = 32),
  sealing_key  bytea check (octet_length(sealing_key) = 32),
  enrolled_at  timestamptz,
  last_seen    timestamptz,
  created_at   timestamptz not null default now(),
  -- keys arrive together or not at all
  check ((enrolled_at is null) = (identity_key is null)
     and (identity_key is null) = (overlay_key is null)
     and (overlay_key is null) = (sealing_key is null))
);
comment on table inventory.node is 'A machine of the mesh, from the moment its token is issued.';
comment on column inventory.node.name is 'Also its broker account (node.NAME) and queue: the pattern keeps permission patterns from widening.';
comment on column inventory.node.site is 'Where it is; nodes at one site may reach each other directly.';
comment on column inventory.node.dialable is 'host:port others can dial for its overlay, or null when it sits behind NAT.';
comment on column inventory.node.identity_key is 'Ed25519 public key: signs what the node says about itself (rekeys).';
comment on column inventory.node.overlay_key is 'X25519 public key: its WireGuard key.';
comment on column inventory.node.sealing_key is 'X25519 public key: secrets are sealed to it.';
comment on column inventory.node.enrolled_at is 'When its token was spent; null until then.';
comment on column inventory.node.last_seen is 'When anything was last heard from it: heard, report, refusal.';
comment on column inventory.node.created_at is 'When its first token was issued.';

create table inventory.token (
  token_hash bytea primary key check (octet_length(token_hash) = 32),
  node       text not null references inventory.node (name) on delete cascade,
  issued_at  timestamptz not null default now(),
  expires_at timestamptz not null,
  spent_at   timestamptz,
  spent_by   bytea check (octet_length(spent_by) = 32)
);
comment on table inventory.token is 'One-time enrolment tokens, stored hashed (E1): the secret itself is the node''s first broker password and is never kept.';
comment on column inventory.token.token_hash is 'sha256 of the token secret.';
comment on column inventory.token.node is 'The one node this token enrols.';
comment on column inventory.token.issued_at is 'When it was issued.';
comment on column inventory.token.expires_at is 'After this it cannot be spent.';
comment on column inventory.token.spent_at is 'When it was spent; set by the one statement that finds it (E1).';
comment on column inventory.token.spent_by is 'The identity key that spent it, so a redelivered request from the same node is answered again rather than refused.';

create table inventory.report (
  node        text primary key references inventory.node (name) on delete cascade,
  serial      bigint not null,
  held        jsonb not null check (jsonb_typeof(held) = 'array'),
  failed      jsonb not null default '[]' check (jsonb_typeof(failed) = 'array'),
  reported_at timestamptz not null default now()
);
comment on table inventory.report is 'The last account each node gave of what it holds: a backup copy for a rebuilt node, never a source (R2).';
comment on column inventory.report.node is 'Whose account.';
comment on column inventory.report.serial is 'The declaration serial the account was given against.';
comment on column inventory.report.held is 'What it holds: [{id, kind, target, origin, digest}]. An empty array means it reported nothing; no row means it never reported.';
comment on column inventory.report.failed is 'Resources it could not apply, with the reason.';
comment on column inventory.report.reported_at is 'When the account arrived: its age goes with every answer.';
