// V3: a first node lost and put back from an older backup brings the mesh back.
// Three nodes run; the mesh declares three times; the backup is taken after the
// first. The store, the signing key and the broker's accounts and queues are
// destroyed, and a freshly installed store (migrated, empty) gets the backup.
// The nodes hold serials the restored store never issued: each says its
// highest applied serial when it asks for its declaration, the store continues
// above it, and every node applies a declaration newer than the one it held,
// with its own identity (no token issued, nothing enrolled again), refusing
// nothing as a replay. The history's chain still verifies.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, statSync, writeFileSync, mkdtempSync, rmSync, mkdirSync, copyFileSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { tmpdir } from 'node:os';
import postgres from 'postgres';
import { freshMesh, deleteVhost, type Mesh, type Proc } from '../harness/mesh.js';
import { servers } from '../harness/servers.js';
import { addModule, cli, b64, root, until } from '../declare/helpers.js';
import { run } from '../../src/sys/proc.js';
import { ensureSigner } from '../../src/home/home.js';

const NODES = ['r1', 'r2', 'r3'];

interface Ctx {
  mesh: Mesh;
  serve: Proc;
  procs: Record<string, Proc>;
  dirs: Record<string, string>;
  root: string;
  file: string;
  scratch: string;
  /** The broker's certificate folder, named with --broker-tls: never the machine's own /var/lib/mesh. */
  tls: string;
}

const R = suite<Ctx>('a restore from an older backup brings every node back above the serial it held (V3)');

const conf = (ctx: Ctx) => join(ctx.root, 'web.conf');

/** Every node applied SERIAL (the module's new content owes each one). */
async function version(ctx: Ctx, v: string, serial: number): Promise<void> {
  await addModule(ctx.mesh, 'web', [{ kind: 'file', path: conf(ctx), content: b64(v), mode: '0644' }]);
  await Promise.all(NODES.map((n) => ctx.procs[n]!.waitFor(new RegExp(`applied declaration ${serial}\\b`), 30_000)));
}

const count = async (mesh: Mesh, q: 'tokens' | 'enrolled') =>
  Number(
    (q === 'tokens'
      ? await mesh.store.admin`select count(*) as n from inventory.token`
      : await mesh.store.admin`select count(*) as n from audit.event where kind in ('token-issued', 'enrolled')`)[0]!.n,
  );

R.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  ctx.root = root();
  ctx.scratch = mkdtempSync(join(tmpdir(), 'mesh-backup-test-'));
  ctx.file = join(ctx.scratch, 'mesh.tar');
  // The run's own broker certificate and key, as the bundle's broker holds them.
  ctx.tls = join(ctx.scratch, 'tls');
  mkdirSync(ctx.tls, { mode: 0o700 });
  const cert = servers().rabbit.certPath;
  copyFileSync(cert, join(ctx.tls, 'broker.pem'));
  copyFileSync(join(dirname(cert), 'broker.key'), join(ctx.tls, 'broker.key'));
  ctx.procs = {};
  ctx.dirs = {};
  // The module is one file all three write to: each node's content is the same, and the one file says the truth.
  for (const n of NODES) {
    const j = await ctx.mesh.joined(n, { MESH_HOST_ROOTS: ctx.root, MESH_HOST_RECONCILE_SECONDS: '3600' });
    ctx.procs[n] = j.proc;
    ctx.dirs[n] = j.host.dir;
  }
  await Promise.all(NODES.map((n) => ctx.procs[n]!.waitFor(/applied declaration 1\b/, 30_000)));
  await addModule(ctx.mesh, 'web', [{ kind: 'file', path: conf(ctx), content: b64('v1'), mode: '0644' }]);
  for (const n of NODES) await cli(ctx.mesh, 'assign', 'web', n);
  await Promise.all(NODES.map((n) => ctx.procs[n]!.waitFor(/applied declaration 2\b/, 30_000)));
});

R.after(async (ctx) => {
  await ctx.mesh.stop();
  rmSync(ctx.root, { recursive: true, force: true });
  rmSync(ctx.scratch, { recursive: true, force: true });
});

R(
  'destroyed after three declares, restored from the backup after the first: every node above its serial, no token',
  async (ctx) => {
    // Declare 1 was the assignment (serial 2). The backup, then declares 2 and 3 (serials 3 and 4).
    const b = await ctx.mesh.cli(['backup', ctx.file, '--json', '--broker-tls', ctx.tls]);
    assert.is(b.code, 0, b.stderr);
    assert.is(statSync(ctx.file).mode & 0o777, 0o600, 'the backup holds the signing key: 0600');
    const taken = JSON.parse(b.stdout) as { members: { name: string }[] };
    assert.equal(
      taken.members.map((m) => m.name),
      ['store.sql', 'signing.key', 'broker-definitions.json', 'broker.pem', 'broker.key'],
    );
    const tlsAtBackup = Object.fromEntries(
      ['broker.pem', 'broker.key'].map((f) => [f, readFileSync(join(ctx.tls, f), 'utf8')]),
    );
    const tokensAtBackup = await count(ctx.mesh, 'tokens');
    const enrolledAtBackup = await count(ctx.mesh, 'enrolled');
    const key = readFileSync(join(ctx.mesh.home, 'signing.key'), 'utf8');
    const identities = Object.fromEntries(
      NODES.map((n) => [n, readFileSync(join(ctx.dirs[n]!, 'identity.json'), 'utf8')]),
    );
    await version(ctx, 'v2', 3);
    await version(ctx, 'v3', 4);
    assert.is(readFileSync(conf(ctx), 'utf8'), 'v3');

    // The first node is lost: serve, the store, the signing key, and the broker's accounts and queues.
    await ctx.serve.stop();
    const s = servers();
    await deleteVhost(s.rabbit.mgmtPort, s.rabbit.admin, ctx.mesh.vhost, ctx.mesh.prefix);
    const root = postgres(`postgres://postgres@127.0.0.1:${s.pg.port}/postgres`, { max: 1, onnotice: () => {} });
    try {
      await root.unsafe(`drop database "${ctx.mesh.store.db}" with (force)`);
      // A freshly installed first node: the store migrated and empty, the broker's vhost, a signing key of its own.
      await root.unsafe(`create database "${ctx.mesh.store.db}" template "${s.template}"`);
    } finally {
      await root.end();
    }
    await ctx.mesh.mgmt('PUT', `/vhosts/${encodeURIComponent(ctx.mesh.vhost)}`, {});
    rmSync(join(ctx.mesh.home, 'signing.key'));
    await ensureSigner(ctx.mesh.env);
    // The broker's certificate files lost too; the folder the new install made is empty.
    for (const f of ['broker.pem', 'broker.key']) rmSync(join(ctx.tls, f));
    // ... and broker.json pins the certificate the new install's broker made.
    const brokerJson = join(ctx.mesh.home, 'broker.json');
    const fresh = JSON.parse(readFileSync(brokerJson, 'utf8')) as { fingerprint: string };
    writeFileSync(brokerJson, JSON.stringify({ ...fresh, fingerprint: fresh.fingerprint.replace(/[0-9A-F]/g, '0') }), {
      mode: 0o600,
    });
    assert.is.not(
      readFileSync(join(ctx.mesh.home, 'signing.key'), 'utf8'),
      key,
      'the new install made a key of its own',
    );

    const marks = Object.fromEntries(NODES.map((n) => [n, ctx.procs[n]!.output().length]));
    const r = await ctx.mesh.cli(['restore', ctx.file, '--json', '--broker-tls', ctx.tls]);
    assert.is(r.code, 0, r.stderr);
    assert.is((JSON.parse(r.stdout) as { brokerTls: boolean }).brokerTls, true, r.stdout);
    for (const [f, mode] of [
      ['broker.pem', 0o644],
      ['broker.key', 0o600],
    ] as const) {
      assert.is(readFileSync(join(ctx.tls, f), 'utf8'), tlsAtBackup[f], `${f} is back`);
      assert.is(statSync(join(ctx.tls, f)).mode & 0o777, mode, `${f} ${mode.toString(8)}`);
    }
    const pinned = JSON.parse(readFileSync(brokerJson, 'utf8')) as { fingerprint: string };
    assert.is(
      pinned.fingerprint,
      new X509Certificate(tlsAtBackup['broker.pem']!).fingerprint256,
      'broker.json pins it',
    );
    assert.is(readFileSync(join(ctx.mesh.home, 'signing.key'), 'utf8'), key, "the mesh's own key is back");
    ctx.serve = await ctx.mesh.serve();
    // The nodes were backing off from a broker that refused them: roused, they try at once (L3).
    for (const n of NODES) ctx.procs[n]!.child.kill('SIGUSR1');

    for (const n of NODES) {
      const p = ctx.procs[n]!;
      await p.waitFor(/applied declaration 5\b/, 40_000, marks[n]);
      const after = p.output().slice(marks[n]);
      assert.not.match(after, /refused a declaration/, `${n} refused nothing`);
      assert.is(readFileSync(join(ctx.dirs[n]!, 'identity.json'), 'utf8'), identities[n], `${n} kept its identity`);
      await ctx.serve.waitFor(
        new RegExp(`recover: ${n} applied serial 4, above every serial this store issued it.*declared again at 5`),
        20_000,
        0,
      );
    }
    assert.is(readFileSync(conf(ctx), 'utf8'), 'v1', 'the mesh is back as the backup says');
    await until('every node acknowledged serial 5', async () => {
      const rows = await ctx.mesh.store
        .admin`select node from assignment.declaration_status where serial = 5 and state = 'applied'`;
      return rows.length === NODES.length;
    });
    assert.is(await count(ctx.mesh, 'tokens'), tokensAtBackup, 'no token issued');
    assert.is(await count(ctx.mesh, 'enrolled'), enrolledAtBackup, 'nothing issued or enrolled in the history');
    const v = await ctx.mesh.cli(['audit', 'verify']);
    assert.is(v.code, 0, `the history's chain verifies after the restore: ${v.stdout}${v.stderr}`);
  },
);

R('restore refuses a store that holds a mesh, unless --force (MSHR3)', async (ctx) => {
  const r = await ctx.mesh.cli(['restore', ctx.file]);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /MSHR3/);
  assert.match(r.stderr, /--force/);
});

R('restore refuses a damaged backup before touching anything (MSHR2)', async (ctx) => {
  const dir = mkdtempSync(join(ctx.scratch, 'damaged-'));
  await run('tar', ['--extract', '--file', ctx.file, '--directory', dir]);
  const dump = join(dir, 'store.sql');
  writeFileSync(dump, readFileSync(dump, 'utf8').replace('CREATE', 'CREATe'));
  const damaged = join(ctx.scratch, 'damaged.tar');
  await run('tar', [
    '--create',
    '--file',
    damaged,
    '--directory',
    dir,
    'manifest.json',
    'store.sql',
    'signing.key',
    'broker-definitions.json',
  ]);
  const before = await count(ctx.mesh, 'tokens');
  const r = await ctx.mesh.cli(['restore', damaged, '--force']);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /store\.sql has sha256/);
  assert.match(r.stderr, /MSHR2/);
  assert.is(await count(ctx.mesh, 'tokens'), before, 'the store was not touched');
});

R('restore refuses a file that is not a mesh backup (MSHR1)', async (ctx) => {
  const junk = join(ctx.scratch, 'junk.tar');
  writeFileSync(junk, 'not a tar at all\n');
  const r = await ctx.mesh.cli(['restore', junk, '--force']);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /MSHR1/);
  const dir = mkdtempSync(join(ctx.scratch, 'other-'));
  writeFileSync(join(dir, 'manifest.json'), '{"format": "something-else"}');
  const other = join(ctx.scratch, 'other.tar');
  await run('tar', ['--create', '--file', other, '--directory', dir, 'manifest.json']);
  const o = await ctx.mesh.cli(['restore', other, '--force']);
  assert.match(o.stderr, /is not a mesh backup \(its manifest is not of one\)/);
  assert.match(o.stderr, /MSHR1/);
});

R('backup and restore need the superuser session (MSHR4), and backup a folder that exists (MSHR5)', async (ctx) => {
  const env = { ...ctx.mesh.env, MESH_STORE_AUDIT_OWNER: '' };
  const r = await ctx.mesh.cli(['backup', join(ctx.scratch, 'x.tar')], env);
  assert.match(r.stderr, /MSHR4/);
  const m = await ctx.mesh.cli(['backup', join(ctx.scratch, 'no', 'such', 'x.tar')]);
  assert.match(m.stderr, /MSHR5/);
});

R('a node saying a serial no host reads exactly is refused (MSHR0)', async (ctx) => {
  try {
    await ctx.mesh.store.admin`select assignment.continue_serials('r1', 9007199254740991)`;
    assert.unreachable('refused');
  } catch (err) {
    assert.is((err as { code?: string }).code, 'MSHR0');
  }
  // Below what the store issued: nothing moves, and nothing is owed.
  const [c] = await ctx.mesh.store.admin`select assignment.continue_serials('r1', 2) as behind`;
  assert.is(c!.behind, false);
});

R.run();
