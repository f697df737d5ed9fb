// Sealed credentials between modules, end to end on real servers: a real
// control plane, three real mesh-host processes, and a PostgreSQL of the
// suite's own that checks passwords (S1-S5).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, existsSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freshMesh, type Mesh, type Proc, type Host } from '../harness/mesh.js';
import { cli, root, until as untilShort } from '../declare/helpers.js';
import { moduleAdd } from '../../src/catalogue/module_add.js';
import { assign } from '../../src/assignment/assign.js';
import { nodeRetire } from '../../src/inventory/node.js';
import { setRoot, offer, grant } from '../../src/provision/grants.js';
import { placeSecret } from '../../src/secret/accept.js';
import { plan } from '../../src/assignment/declare.js';
import { provision, said } from '../../lab/modules/pg-provisioner.js';
import { servers } from '../harness/servers.js';
import { pgBin } from '../harness/postgres.js';
import { run } from '../../src/sys/proc.js';
import { open, SealError } from '../../src/crypto/seal.js';
import { agreementPair } from '../../src/crypto/keys.js';
import { pgConnection } from '../../lab/modules/pg-consumer.js';
import { loadRoutes, decide } from '../../lab/modules/route-proxy.js';
import { startScramPostgres, connectAs, refused, type ScramPg } from './scram_pg.js';

interface Node {
  host: Host;
  proc: Proc;
}
interface Ctx {
  mesh: Mesh;
  serve: Proc;
  root: string;
  pg: ScramPg;
  env: NodeJS.ProcessEnv;
  db1: Node;
  web1: Node;
  web2: Node;
}
const S = suite<Ctx>('sealed credentials between modules');
// Hosts apply on a machine other suites share: wait on the files, generously, never on time.
const until = <T>(what: string, f: () => Promise<T | undefined | null | false>, ms = 120_000) =>
  untilShort(what, f, ms);

const provides = (ctx: Ctx, consumer: string, ext: string) => join(ctx.root, 'provides', 'appdb', `${consumer}.${ext}`);
const uses = (ctx: Ctx, consumer: string, ext: string) => join(ctx.root, 'uses', consumer, `appdb.${ext}`);
const read = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : undefined);
const sealingKey = (n: Node) =>
  new Uint8Array(
    Buffer.from(JSON.parse(readFileSync(join(n.host.dir, 'identity.json'), 'utf8')).keys.sealing, 'base64'),
  );
const adminFile = (ctx: Ctx) => join(ctx.root, 'db1', 'pg-admin');

/** The provider module, run over the directory db1's host wrote, with the superuser password from the file the mesh wrote there. */
async function provisioner(ctx: Ctx): Promise<string> {
  const done = await provision(join(ctx.root, 'provides', 'appdb'), {
    host: '127.0.0.1',
    port: ctx.pg.port,
    user: 'postgres',
    passwordFile: adminFile(ctx),
  });
  return done.map(said).join('\n');
}

async function blobs(ctx: Ctx, secret: string) {
  return ctx.mesh.store
    .admin`select holder, blob, generation from secret.sealed where secret = ${secret} order by holder`;
}
async function serials(ctx: Ctx) {
  const rows = await ctx.mesh.store
    .admin`select node, max(serial)::int as s from assignment.declaration group by node order by node`;
  return Object.fromEntries(rows.map((r) => [r.node, r.s]));
}

S.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.root = root();
  ctx.pg = await startScramPostgres();
  ctx.serve = await ctx.mesh.serve();
  // Setup runs the command functions in this process (each CLI start costs seconds on a
  // busy machine); the commands under test below go through the real `mesh` CLI.
  Object.assign(process.env, ctx.mesh.env);
  ctx.env = { MESH_HOST_ROOTS: ctx.root, MESH_HOST_RECONCILE_SECONDS: '3600' };
  [ctx.db1, ctx.web1, ctx.web2] = await Promise.all(['db1', 'web1', 'web2'].map((n) => ctx.mesh.joined(n, ctx.env)));
  await setRoot(ctx.root);
  for (const m of ['pg', 'app', 'app2', 'proxy']) await put(ctx, m);
  await assign('pg', 'db1', true);
  await assign('app', 'web1', true);
  await assign('app2', 'web2', true);
  await offer('appdb', { kind: 'postgres', provider: 'pg', host: '127.0.0.1', port: ctx.pg.port });
  // The provider's own superuser password: a value PostgreSQL was told, so accepted, not made (S4).
  await placeSecret('pg-admin', 'accepted', { nodes: ['db1'], path: adminFile(ctx), from: ctx.pg.passwordFile });
  await grant('appdb', 'app', { database: 'app', user: 'app_user' });
  await grant('appdb', 'app2', { database: 'app2', user: 'app2_user' });
  await until('every file written', async () =>
    [
      adminFile(ctx),
      provides(ctx, 'app', 'secret'),
      provides(ctx, 'app2', 'secret'),
      uses(ctx, 'app', 'secret'),
      uses(ctx, 'app2', 'secret'),
    ].every(existsSync),
  );
});
async function put(ctx: Ctx, name: string) {
  const f = join(ctx.mesh.home, `${name}.json`);
  writeFileSync(f, JSON.stringify({ name, resources: [] }));
  await moduleAdd(f);
}
S.after(async (ctx) => {
  await ctx.mesh?.stop();
  await ctx.pg?.stop();
  if (ctx.root) rmSync(ctx.root, { recursive: true, force: true });
});

S(
  'S1/S2: the provider makes the role from the files the mesh wrote; the consumer connects with its own file',
  async (ctx) => {
    const out = await provisioner(ctx);
    assert.match(out, /created role app_user for app; database app/);
    assert.match(out, /created role app2_user for app2; database app2/);
    const binds = JSON.parse(read(uses(ctx, 'app', 'binds'))!);
    assert.equal(
      { host: binds.host, port: binds.port, database: binds.database, user: binds.user },
      { host: '127.0.0.1', port: ctx.pg.port, database: 'app', user: 'app_user' },
    );
    assert.not.match(read(uses(ctx, 'app', 'binds'))!, read(uses(ctx, 'app', 'secret'))!, 'binds carry no credential');
    const conn = pgConnection(ctx.root, 'app', 'appdb');
    assert.is(await connectAs(conn), 'app_user@app');
    // The server really checks: a wrong password is refused, so connecting above proved the credential.
    assert.ok(await refused(connectAs({ ...conn, password: 'not-it' })));
    // Two pairs, two credentials (S5).
    assert.is.not(read(uses(ctx, 'app', 'secret')), read(uses(ctx, 'app2', 'secret')));
  },
);

S(
  "S1: no table of the control plane's database holds a plaintext; no blob opens without its node's key",
  async (ctx) => {
    const plain = [
      read(uses(ctx, 'app', 'secret'))!,
      read(uses(ctx, 'app2', 'secret'))!,
      readFileSync(ctx.pg.passwordFile, 'utf8'),
    ];
    const { pg } = servers();
    const dump = await run(pgBin('pg_dump'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(pg.port),
      '-U',
      'postgres',
      '--data-only',
      ctx.mesh.store.db,
    ]);
    assert.ok(dump.includes('COPY secret.sealed'), 'the dump covers the secret tables');
    assert.ok(dump.includes('COPY assignment.declaration'), 'and the declarations as sent');
    for (const p of plain) {
      for (const form of [p, Buffer.from(p).toString('hex'), Buffer.from(p).toString('base64')]) {
        assert.not.ok(dump.includes(form), 'a plaintext (or its hex/base64) is in the database');
      }
    }
    const all = await ctx.mesh.store.admin`select secret, holder, blob from secret.sealed`;
    assert.ok(all.length >= 5);
    const signing = new Uint8Array(
      Buffer.from(readFileSync(join(ctx.mesh.home, 'signing.key'), 'utf8').trim(), 'base64'),
    );
    for (const b of all) {
      for (const k of [agreementPair().secret, signing])
        assert.throws(
          () => open(b.blob as string, k),
          (e: unknown) => e instanceof SealError,
        );
    }
  },
);

S("S1: the provider's copy opens with the provider's key to the consumer's credential", async (ctx) => {
  const consumerFile = read(uses(ctx, 'app', 'secret'))!;
  const [db1Blob] = (await blobs(ctx, 'provision/appdb/app')).filter((b) => b.holder === 'db1');
  const [web1Blob] = (await blobs(ctx, 'provision/appdb/app')).filter((b) => b.holder === 'web1');
  assert.is(Buffer.from(open(db1Blob!.blob as string, sealingKey(ctx.db1))).toString(), consumerFile);
  assert.is(Buffer.from(open(web1Blob!.blob as string, sealingKey(ctx.web1))).toString(), consumerFile);
  assert.throws(() => open(db1Blob!.blob as string, sealingKey(ctx.web1)), 'sealed to db1 alone');
  assert.is(read(provides(ctx, 'app', 'secret')), consumerFile);
});

S(
  'S5: rotating one consumer changes one pair; both ends are sent by the command, and the old credential works until both acknowledged',
  async (ctx) => {
    const old = pgConnection(ctx.root, 'app', 'appdb');
    const otherBefore = await blobs(ctx, 'provision/appdb/app2');
    const before = await serials(ctx);
    const r = await ctx.mesh.cli(['secret', 'rotate', 'appdb', 'app', '--json']);
    assert.is(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.sent.map((d: { node: string }) => d.node).sort(), ['db1', 'web1']);
    assert.ok(out.sent.every((d: { queued: boolean }) => d.queued));
    assert.match(
      out.window,
      /^no window: db1 \(serial \d+\) accepts both the old and the new credential of app until every holder \(db1, web1\) acknowledged generation 2/,
    );
    const after = await serials(ctx);
    assert.is(after.web2, before.web2, 'the other consumer was not sent anything');
    assert.is(after.db1, before.db1 + 1);
    assert.is(after.web1, before.web1 + 1);
    assert.equal(await blobs(ctx, 'provision/appdb/app2'), otherBefore, "the other pair's blobs are untouched");
    await until('both ends hold the new credential', async () => {
      const c = read(uses(ctx, 'app', 'secret'));
      return c !== old.password && c === read(provides(ctx, 'app', 'secret'));
    });
    assert.is(
      pgConnection(ctx.root, 'app', 'appdb').user,
      'app_user-2',
      "the consumer logs in as the new generation's role",
    );
    // Settled by the hosts' own reports: serve re-declares the provider without generation 1, no command typed.
    await until('the rotation settled and the provider no longer holds generation 1', async () => {
      const [rot] = await ctx.mesh.store
        .admin`select settled, waiting_for from provision.rotation where secret = 'provision/appdb/app'`;
      return (
        rot!.settled === 2 &&
        (rot!.waiting_for as string[]).length === 0 &&
        !existsSync(provides(ctx, 'app', '1.secret'))
      );
    });
    assert.is(await connectAs(old), 'app_user@app', 'until the provider runs, the old credential still works');
    const ran = await provisioner(ctx);
    assert.match(ran, /updated role app_user for app; database app; accepts app_user-2; retired app_user-1$/m, ran);
    assert.ok(await refused(connectAs(old)), 'the old credential is gone');
    assert.is(await connectAs(pgConnection(ctx.root, 'app', 'appdb')), 'app_user@app');
    assert.is(
      await connectAs(pgConnection(ctx.root, 'app2', 'appdb')),
      'app2_user@app2',
      'the other pair still connects',
    );
  },
);

/** Serve owes an enrolled node its first declaration after answering it: wait for it, so it is not counted as sent by the rotation. */
const firstDeclared = (ctx: Ctx, node: string) =>
  until(
    `${node}'s first declaration`,
    async () => (await ctx.mesh.store.admin`select 1 from assignment.declaration where node = ${node}`).length > 0,
  );

async function rotationRefused(ctx: Ctx, reason: RegExp): Promise<void> {
  const working = pgConnection(ctx.root, 'app', 'appdb');
  const before = {
    serials: await serials(ctx),
    blobs: await blobs(ctx, 'provision/appdb/app'),
    declared: (await ctx.mesh.store.admin`select count(*)::int as n from assignment.declaration`)[0]!.n,
  };
  const r = await ctx.mesh.cli(['secret', 'rotate', 'appdb', 'app']);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, reason);
  assert.match(r.stderr, /nothing was sent and the old credential keeps working/i);
  assert.equal(await serials(ctx), before.serials, 'nothing was sent');
  assert.is((await ctx.mesh.store.admin`select count(*)::int as n from assignment.declaration`)[0]!.n, before.declared);
  assert.equal(await blobs(ctx, 'provision/appdb/app'), before.blobs, 'the new value was not committed');
  await provisioner(ctx);
  assert.is(await connectAs(working), 'app_user@app', 'the old credential keeps working');
}

S('S5: a holder that is not enrolled any more makes the whole rotation send nothing', async (ctx) => {
  const ghost = ctx.mesh.host('ghost', ctx.env);
  const e = await ghost.enrol(await ctx.mesh.token('ghost'));
  assert.is(e.code, 0, e.stderr);
  await firstDeclared(ctx, 'ghost');
  await assign('app', 'ghost', true);
  try {
    await nodeRetire('ghost');
    await rotationRefused(ctx, /cannot resolve ghost: not enrolled.*\(MSH51\)/);
  } finally {
    await assign('app', 'ghost', false);
  }
});

S('S5: a holder whose queue is gone makes the whole rotation send nothing', async (ctx) => {
  const lost = ctx.mesh.host('lost', ctx.env);
  const e = await lost.enrol(await ctx.mesh.token('lost'));
  assert.is(e.code, 0, e.stderr);
  await firstDeclared(ctx, 'lost');
  await assign('app', 'lost', true);
  try {
    assert.is((await ctx.mesh.mgmt('DELETE', `/queues/${ctx.mesh.vhost}/node.lost`)).status, 204);
    await rotationRefused(
      ctx,
      /cannot resolve lost: no queue on the broker, so it cannot be told: nothing was sent.*\(MSHB2\)/,
    );
  } finally {
    await assign('app', 'lost', false);
    await nodeRetire('lost');
  }
});

S(
  'S3/S4: a rejoined machine gets its made credential again at its enrolment, with no command typed, the provider in the same push; an accepted one is refused: issue it again',
  async (ctx) => {
    const pwFile = join(ctx.root, 'broker.pw');
    writeFileSync(pwFile, 'told-to-the-broker', { mode: 0o600 });
    const brokerPath = join(ctx.root, 'web1', 'broker.pw');
    await placeSecret('web1-broker', 'accepted', { nodes: ['web1'], path: brokerPath, from: pwFile });
    await until('accepted secret written', async () => read(brokerPath) === 'told-to-the-broker');
    const old = read(uses(ctx, 'app', 'secret'))!;
    const other = await blobs(ctx, 'provision/appdb/app2');
    // The machine is rebuilt: retired, and joined again with new keys.
    await ctx.web1.proc.stop();
    await nodeRetire('web1');
    const smark = ctx.serve.output().length;
    const [gen] = await ctx.mesh.store.admin`select generation from secret.secret where name = 'provision/appdb/app'`;
    ctx.web1 = await ctx.mesh.joined('web1', ctx.env);
    // No command typed: serve made the pair again at the enrolment, for both ends (S3);
    // the accepted one it cannot make stays stale, and the log names the remedy.
    await until('serve made the pair again', async () => {
      const stale = await ctx.mesh.store.admin`select secret from secret.stale order by secret`;
      return stale.map((x) => x.secret).join() === 'web1-broker';
    });
    const [now] = await ctx.mesh.store.admin`select generation from secret.secret where name = 'provision/appdb/app'`;
    assert.is(now!.generation, gen!.generation + 1, 'made again once');
    await ctx.serve.waitFor(
      /serve: made provision\/appdb\/app again \(generation \d+\) for db1, web1 \(.*web1's enrolment.*\)/,
      30_000,
      smark,
    );
    await ctx.serve.waitFor(/serve: web1 holds no current copy of web1-broker: .*issue it again/, 30_000, smark);
    // The operator's remake finds only the accepted one, and refuses it with the remedy.
    const r = await ctx.mesh.cli(['secret', 'remake', '--json']);
    assert.is(r.code, 4, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.made, []);
    assert.is(out.refused.length, 1);
    assert.is(out.refused[0].secret, 'web1-broker');
    assert.match(out.refused[0].reason, /was accepted, not made.*issue it again.*\(MSH40\)/);
    assert.equal(out.sent, []);
    assert.equal(await blobs(ctx, 'provision/appdb/app2'), other);
    const [acc] = await ctx.mesh.store.admin`select generation from secret.secret where name = 'web1-broker'`;
    assert.is(acc!.generation, 1, 'the accepted secret was not regenerated');
    await until('the rejoined machine and the provider hold the same new credential', async () => {
      const c = read(uses(ctx, 'app', 'secret'));
      return c !== old && c === read(provides(ctx, 'app', 'secret'));
    });
    const [db1Blob] = (await blobs(ctx, 'provision/appdb/app')).filter((b) => b.holder === 'db1');
    assert.is(
      Buffer.from(open(db1Blob!.blob as string, sealingKey(ctx.db1))).toString(),
      read(uses(ctx, 'app', 'secret')),
    );
    await provisioner(ctx);
    assert.is(await connectAs(pgConnection(ctx.root, 'app', 'appdb')), 'app_user@app');
    // Issued again: the operator hands the value over once more.
    rmSync(brokerPath);
    await cli(ctx.mesh, 'secret', 'accept', 'web1-broker', '--node', 'web1', '--path', brokerPath, '--from', pwFile);
    await until('issued again', async () => read(brokerPath) === 'told-to-the-broker');
    assert.equal((await ctx.mesh.store.admin`select secret from secret.stale`).length, 0);
  },
);

S('routes: the proxy is told where each consumer is; the consumer is told its name', async (ctx) => {
  await assign('proxy', 'db1', true);
  await offer('edge', { kind: 'route', provider: 'proxy' });
  await cli(ctx.mesh, 'provision', 'grant', 'edge', 'app', '--name', 'app.test', '--port', '8080');
  const planned = (n: string) =>
    plan(n).then((p) => JSON.parse(p.text).resources as { id: string; content?: string }[]);
  const file = (rs: { id: string; content?: string }[], p: string) => rs.find((x) => x.id === `file:${p}`);
  const prov = file(await planned('db1'), join(ctx.root, 'provides', 'edge', 'app.binds'));
  assert.ok(prov, 'the proxy gets one binds file for the consumer');
  assert.not.ok(
    (await planned('db1')).some((x) => x.id.includes('/provides/edge/') && x.id.startsWith('secret:')),
    'a route carries no secret',
  );
  const dir = join(ctx.root, 'edge-test');
  const { mkdirSync } = await import('node:fs');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'app.binds'), Buffer.from(prov!.content!, 'base64'));
  const table = loadRoutes(dir);
  const d = decide(table, 'app.test');
  assert.ok('upstream' in d && d.upstream.node === 'web1' && d.upstream.port === 8080, JSON.stringify(d));
  const cons = file(await planned('web1'), join(ctx.root, 'uses', 'app', 'edge.binds'));
  assert.is(JSON.parse(Buffer.from(cons!.content!, 'base64').toString()).name, 'app.test');
  const list = JSON.parse(await cli(ctx.mesh, 'provision', 'list', '--json'));
  assert.equal(
    list.map((g: { provision: string; consumer: string }) => `${g.provision}/${g.consumer}`),
    ['appdb/app', 'appdb/app2', 'edge/app'],
  );
});

S(
  "S3: a module newly placed on a node: the assign itself makes the pair's credential again for every holder, all sent in one push, no remake typed",
  async (ctx) => {
    const staleFor = async () =>
      (
        await ctx.mesh.store
          .admin`select holders_without_copy from provision.stale_credentials where secret = 'provision/appdb/app'`
      )[0]?.holders_without_copy as string[] | undefined;
    const [gen] = await ctx.mesh.store.admin`select generation from secret.secret where name = 'provision/appdb/app'`;
    const r = JSON.parse(await cli(ctx.mesh, 'assign', 'app', 'web2', '--json'));
    const made = (r.remade ?? []).find((m: { secret: string }) => m.secret === 'provision/appdb/app');
    assert.ok(made, JSON.stringify(r));
    assert.is(made.generation, gen!.generation + 1);
    assert.equal(made.holders, ['db1', 'web1', 'web2']);
    const sent = Object.fromEntries(
      (r.redeclared as { node: string; serial: number }[]).map((d) => [d.node, d.serial]),
    );
    assert.equal(
      ['db1', 'web1', 'web2'].filter((n) => sent[n] !== undefined),
      ['db1', 'web1', 'web2'],
      `both ends and the new holder in the one push: ${JSON.stringify(r.redeclared)}`,
    );
    assert.is(await staleFor(), undefined, 'no holder is left without a current copy');
    await until('every holder applied its push', async () => {
      const rows = await ctx.mesh.store
        .admin`select node, serial::int from inventory.report where node in ('db1', 'web1', 'web2')`;
      return rows.length === 3 && rows.every((x) => x.serial >= sent[x.node as string]!);
    });
    // Nothing left to make: the operator's remake has nothing to do.
    const again = JSON.parse(await cli(ctx.mesh, 'secret', 'remake', '--json'));
    assert.equal(again.made, []);
  },
);

S.run();
