#!/usr/bin/env node
// The store's standby, one half on each machine (bundle/replication.ts says what
// each half does and why it is synchronous). As root:
//
//   on the primary (the first node):
//     node /opt/mesh/dist/bundle/standby.js primary --standby NODE --standby-address OVERLAY-ADDR --listen OWN-OVERLAY-ADDR
//   copy STATE/postgres/standby-NODE.pgpass to the standby (scp; it is 0600), then on the standby:
//     node /opt/mesh/dist/bundle/standby.js standby --name NODE --primary OWN-OVERLAY-ADDR:5433 --passfile PATH
//
// The primary half also opens the store's port to the standby alone, over the
// overlay (X2: a module opening derived in SQL), and restarts mesh-postgres to
// listen on its overlay address too.
import { parseArgs } from 'node:util';
import { chownSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { preparePrimary, passfileLine, writePassfile, cloneStandby, replicationOpening } from './replication.js';
import { superuser, postgresSpec, pgBin } from './postgres.js';
import { unitPath, unitText, hasSystemd, ensureUnits } from './units.js';
import { DEFAULT_PORTS, paths, controlEnv, type Options } from './layout.js';
import { writeAtomic } from '../src/sys/atomic.js';
import { run } from '../src/sys/proc.js';
import { connect } from '../src/store/connect.js';
import { assign } from '../src/assignment/assign.js';
import { redeclare } from '../src/provision/redeclare.js';
import { loadIdentity } from '../host/identity.js';
import { refuse } from '../src/sys/errors.js';
import { isHostPort, splitHostPort } from '../src/wire/names.js';
import { runMain } from './main.js';

export const STORE_MODULE = 'mesh-store';
export const STANDBY_MODULE = 'mesh-store-standby';

function options(v: Record<string, string | undefined>, listen?: string[]): Options {
  const state = v.state ?? '/var/lib/mesh';
  const pg = v['pg-port'] ? Number(v['pg-port']) : DEFAULT_PORTS.pg;
  return {
    state,
    home: v.home ?? '/etc/mesh',
    hostDir: v['host-dir'] ?? '/var/lib/mesh-host',
    ports: { ...DEFAULT_PORTS, pg },
    pgListen: listen,
  } as Options;
}

async function ids(): Promise<{ uid: number; gid: number }> {
  return {
    uid: Number((await run('id', ['-u', 'postgres'])).trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).trim()),
  };
}

/** mesh-postgres as the first node's, with these listen addresses: the unit written, then reloaded and (re)started. */
async function raiseStore(o: Options): Promise<string[]> {
  const spec = postgresSpec(o);
  if (!hasSystemd())
    return [`no systemd here: start ${spec.exec.join(' ')} as postgres (mesh-host supervises it on the first node)`];
  await writeAtomic(unitPath(spec.name), unitText(spec), 0o644);
  return ensureUnits([spec], new Set([`file:${unitPath(spec.name)}`]));
}

async function primary(v: Record<string, string | undefined>): Promise<void> {
  const standby = v.standby,
    address = v['standby-address'],
    listen = v.listen;
  if (!standby || !address || !listen)
    throw refuse(
      'MSH95',
      "primary needs --standby NODE --standby-address ADDR (the standby's overlay address) --listen ADDR (this node's overlay address)",
    );
  const o = options(v, [listen]);
  const p = paths(o);
  const self = loadIdentity(o.hostDir)?.name;
  if (!self) throw refuse('MSH94', `${o.hostDir} holds no identity`, 'run this on the first node (or give --host-dir)');
  // Synchronous replication comes last: from the moment it is set every
  // commit waits for the standby, so what this step writes itself (the
  // opening below) and the store's overlay listener come first, or the step
  // would wait on a standby it has not yet let in.
  // X2: the store's port, from the standby's module alone, over the overlay.
  Object.assign(process.env, controlEnv(o));
  const cat = await connect('catalogue', { max: 1 });
  try {
    await cat`select * from catalogue.put_module(${STORE_MODULE}, ${cat.json(replicationOpening(o.ports.pg, STANDBY_MODULE) as never)}, 'shipped')`;
    await cat`select * from catalogue.put_module(${STANDBY_MODULE}, ${cat.json([] as never)}, 'shipped')`;
  } finally {
    await cat.end();
  }
  await assign(STORE_MODULE, self, true);
  await assign(STANDBY_MODULE, standby, true);
  const { redeclared: sent } = await redeclare();
  console.log(
    `firewall: ${o.ports.pg}/tcp open to ${standby} over the overlay; declared ${sent.map((d) => `${d.node} ${d.serial}`).join(', ') || 'nothing new'}`,
  );
  for (const l of await raiseStore(o)) console.log(`store: ${l}`);
  const su = await superuser(o, 'mesh');
  let password: string;
  try {
    const r = await preparePrimary(su, {
      pgData: p.pgData,
      standbyAddress: address,
      standby: standby.replace(/-/g, '_'),
    });
    password = r.password;
    console.log(`primary: ${r.changed.join(', ')}`);
  } finally {
    await su.end();
  }
  const passfile = join(p.pg, `standby-${standby}.pgpass`);
  await writePassfile(passfile, passfileLine(listen, o.ports.pg, password));
  console.log(`passfile for the standby: ${passfile} (0600): copy it to ${standby}, then remove it here`);
}

async function standbyHalf(v: Record<string, string | undefined>): Promise<void> {
  const name = v.name,
    primaryAt = v.primary,
    given = v.passfile;
  if (!name || !primaryAt || !given)
    throw refuse(
      'MSH96',
      'standby needs --name NODE --primary HOST:PORT --passfile PATH (the file the primary half wrote)',
    );
  if (!isHostPort(primaryAt)) throw refuse('MSH97', `--primary ${JSON.stringify(primaryAt)} is not HOST:PORT`);
  const primary = splitHostPort(primaryAt);
  const o = options(v);
  const p = paths(o);
  const owner = await ids();
  for (const d of [o.state, p.pg]) mkdirSync(d, { recursive: true, mode: 0o755 });
  mkdirSync(p.pgSock, { recursive: true, mode: 0o700 });
  chownSync(p.pgSock, owner.uid, owner.gid);
  chownSync(p.pg, owner.uid, owner.gid);
  // postgres reads it at every reconnect of the stream: its own copy, 0600; the one copied in is removed.
  const passfile = join(p.pg, 'replication.pgpass');
  await writePassfile(passfile, readFileSync(given, 'utf8'), owner);
  rmSync(given, { force: true });
  await cloneStandby({
    pgData: p.pgData,
    primaryHost: primary.host,
    primaryPort: primary.port,
    passfile,
    standby: name.replace(/-/g, '_'),
    asUser: 'postgres',
    pgBasebackup: pgBin('pg_basebackup'),
  });
  console.log(`standby: cloned into ${p.pgData}, streaming from ${primaryAt} through its slot`);
  for (const l of await raiseStore(o)) console.log(`store: ${l}`);
  console.log('promote it with: mesh store promote (only once the primary is down for good)');
}

async function main(): Promise<void> {
  const { values: v, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      state: { type: 'string' },
      home: { type: 'string' },
      'host-dir': { type: 'string' },
      'pg-port': { type: 'string' },
      standby: { type: 'string' },
      'standby-address': { type: 'string' },
      listen: { type: 'string' },
      name: { type: 'string' },
      primary: { type: 'string' },
      passfile: { type: 'string' },
    },
  });
  if (process.getuid?.() !== 0)
    throw refuse('MSH93', 'the standby bundle runs as root (it runs PostgreSQL as postgres)');
  if (positionals[0] === 'primary') return primary(v);
  if (positionals[0] === 'standby') return standbyHalf(v);
  throw refuse('MSH98', 'no half was named');
}

runMain(main);
