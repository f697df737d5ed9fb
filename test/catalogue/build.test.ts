// Builds and the catalogue end to end (B1, B2), on a real broker, registry,
// store, podman and mesh-builder: asked, consumed, built, pushed, answered;
// the commit and digest recorded; the source moves and the catalogue says
// behind; a rebuild catches up. A failure is an answer. Only the control
// plane may ask, only builders may answer, and only once.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { publish } from '../../src/broker/publish.js';
import { startRegistry, type Registry } from '../harness/registry.js';
import { connectBroker } from '../../src/broker/connect.js';
import { cli, until } from '../declare/helpers.js';
import {
  baseTarball,
  storage,
  repo,
  startBuilder,
  credentialOf,
  BASE_IMAGE,
  waiting,
  type Storage,
  type Repo,
  type BuilderProc,
} from './helpers.js';

interface Ctx {
  mesh: Mesh;
  serve: Proc;
  registry: Registry;
  tmp: string;
  st: Storage;
  b1: BuilderProc;
  src: Repo;
  web1Dir: string;
  first: { id: string; digest: string; commit: string; version: number };
  failedId: string;
}
const B = suite<Ctx>('builds and the catalogue');

const CONTAINERFILE = `FROM ${BASE_IMAGE}\nRUN echo built > /built\nCOPY index.html /www/index.html\nCMD ["/bin/sh"]\n`;

B.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  ctx.registry = await startRegistry();
  ctx.tmp = mkdtempSync(join(tmpdir(), 'mesh-build-test-'));
  ctx.st = await storage(await baseTarball(ctx.tmp));
  ctx.b1 = await startBuilder(ctx.mesh, 'b1', ctx.registry.addr, ctx.st);
  ctx.src = await repo();
  ctx.web1Dir = (await ctx.mesh.joined('web1')).host.dir;
});
B.after(async (ctx) => {
  await ctx.b1?.stop();
  await ctx.mesh?.stop();
  await ctx.registry?.stop();
  ctx.st?.remove();
  if (ctx.src) rmSync(ctx.src.dir, { recursive: true, force: true });
  if (ctx.tmp) rmSync(ctx.tmp, { recursive: true, force: true });
});

const list = async (ctx: Ctx, ...extra: string[]) =>
  JSON.parse(await cli(ctx.mesh, 'module', 'list', '--json', ...extra)) as Record<string, any>[];
const row = (rows: Record<string, any>[], m: string) => rows.find((r) => r.module === m)!;

B(
  'a build is requested, consumed, built, pushed and answered; the catalogue records its commit and digest (B1, B2)',
  async (ctx) => {
    const commit = await ctx.src.commit({ 'image/Containerfile': CONTAINERFILE, 'image/index.html': 'v1\n' }, 'first');
    await cli(
      ctx.mesh,
      'module',
      'source',
      'web',
      '--git',
      ctx.src.url,
      '--path',
      'image',
      '--ref',
      'main',
      '--image',
      `${ctx.registry.addr}/web`,
    );
    const r = await ctx.mesh.cli(['build', 'web', '--json', '--timeout', '120s']);
    assert.is(r.code, 0, r.stderr);
    const a = JSON.parse(r.stdout);
    assert.ok(a.ok);
    assert.is(a.builder, 'b1');
    assert.is(a.commit, commit);
    assert.is(a.image, `${ctx.registry.addr}/web`);
    assert.match(r.stderr, /\[b1\] started on builder b1/, 'the requester prints what the builder says');
    assert.match(r.stderr, /\[b1\] STEP 2\/4: RUN echo built/);
    // The digest is the registry's own.
    assert.is(await ctx.registry.manifestDigest('web', commit.slice(0, 12)), a.digest);
    assert.is(await ctx.registry.manifestDigest('web', a.digest), a.digest);
    const results = await ctx.mesh.store
      .admin`select builder, ok, commit_sha, digest from catalogue.build_result where request_id = ${a.id}::uuid`;
    assert.equal(
      [...results].map((x) => ({ ...x })),
      [{ builder: 'b1', ok: true, commit_sha: commit, digest: a.digest }],
    );
    const [m] = await ctx.mesh.store.admin`select origin, version, resources from catalogue.module where name = 'web'`;
    assert.is(m!.origin, 'built');
    assert.equal(m!.resources, [
      { kind: 'container', id: 'container:web', name: 'web', image: `${ctx.registry.addr}/web@${a.digest}` },
    ]);
    const web = row(await list(ctx), 'web');
    assert.is(web.origin, 'built');
    assert.is(web.built_commit, commit);
    assert.is(web.digest, a.digest);
    assert.is(web.behind, false, 'the builder recorded the source head it cloned');
    assert.equal(web.nodes, []);
    ctx.first = { id: a.id, digest: a.digest, commit, version: m!.version };
  },
);

B('the catalogue says which machines run a module, from assignment (B2)', async (ctx) => {
  await cli(ctx.mesh, 'assign', 'web', 'web1');
  assert.equal(row(await list(ctx), 'web').nodes, ['web1']);
  const human = await cli(ctx.mesh, 'module', 'list');
  assert.match(
    human,
    new RegExp(`web\\s+${ctx.first.version}\\s+built from ${ctx.first.commit.slice(0, 12)}\\s+current\\s+\\S+\\s+web1`),
  );
});

B('the source moves past the built commit and the catalogue says behind, computed in SQL (B2)', async (ctx) => {
  const next = await ctx.src.commit({ 'image/index.html': 'v2\n' }, 'second');
  assert.is(
    row(await list(ctx), 'web').behind,
    false,
    'nothing recorded the new head yet: behind is from recorded facts',
  );
  const web = row(await list(ctx, '--refresh'), 'web');
  assert.is(web.behind, true);
  assert.is(web.source_head, next);
  const [dba] = await ctx.mesh.store
    .admin`select behind, source_head, built_commit, nodes from catalogue.module_status where module = 'web'`;
  assert.equal(
    { ...dba },
    { behind: true, source_head: next, built_commit: ctx.first.commit, nodes: ['web1'] },
    'a DBA reads the same answer',
  );
  assert.match(await cli(ctx.mesh, 'module', 'list'), new RegExp(`behind \\(source at ${next.slice(0, 12)}\\)`));
});

B('a rebuild catches up: new commit, new digest, version moves, no longer behind (B1, B2)', async (ctx) => {
  const head = row(await list(ctx), 'web').source_head;
  const a = JSON.parse(await cli(ctx.mesh, 'build', 'web', '--json', '--timeout', '120s'));
  assert.ok(a.ok);
  assert.is(a.commit, head);
  assert.is.not(a.digest, ctx.first.digest, 'the content changed, so the digest did');
  assert.is(await ctx.registry.manifestDigest('web', a.digest), a.digest);
  const web = row(await list(ctx), 'web');
  assert.is(web.behind, false);
  assert.is(web.built_commit, head);
  assert.is(web.digest, a.digest);
  assert.is(web.version, ctx.first.version + 1);
});

B('a failing build is an answer with its log tail, not a timeout (B1)', async (ctx) => {
  const bad = await repo();
  try {
    await bad.commit({ Containerfile: `FROM ${BASE_IMAGE}\nRUN echo about to fail && false\n` }, 'broken');
    await cli(ctx.mesh, 'module', 'source', 'broken', '--git', bad.url, '--image', `${ctx.registry.addr}/broken`);
    const r = await ctx.mesh.cli(['build', 'broken', '--json', '--timeout', '120s']);
    assert.is(r.code, 4, `a failure exits 4 (5 would be a timeout): ${r.stderr}`);
    const a = JSON.parse(r.stdout);
    assert.is(a.ok, false);
    assert.match(a.error, /podman build failed/);
    assert.match(a.log, /about to fail/, "the log tail carries the build's own output");
    assert.match(r.stderr, /the build of broken failed/);
    const [s] = await ctx.mesh.store.admin`select state from catalogue.build_request where id = ${a.id}::uuid`;
    assert.is(s!.state, 'failed');
    assert.is(row(await list(ctx), 'broken').origin, 'not built yet');
    ctx.failedId = a.id;
  } finally {
    rmSync(bad.dir, { recursive: true, force: true });
  }
});

async function publishAs(
  ctx: Ctx,
  user: string,
  password: string,
  key: string,
  body: unknown,
  correlationId: string,
): Promise<void> {
  const s = ctx.mesh.broker;
  const [host, port] = s.public.split(':');
  const conn = await connectBroker({
    host: host!,
    port: Number(port),
    vhost: ctx.mesh.vhost,
    user,
    password,
    fingerprint: s.fingerprint,
  });
  try {
    const ch = await conn.createConfirmChannel();
    await publish(ch, 'mesh', key, Buffer.from(JSON.stringify(body)), { userId: user, correlationId });
  } finally {
    await conn.close();
  }
}

B('a node may write the exchange but not ask for a build: the builder refuses it (B1)', async (ctx) => {
  const id = JSON.parse(readFileSync(join(ctx.web1Dir, 'identity.json'), 'utf8'));
  const reqId = '00000000-0000-4000-8000-000000000001';
  await publishAs(
    ctx,
    id.broker.user,
    id.password,
    'build.request',
    { v: 1, id: reqId, module: 'web', git: ctx.src.url, path: 'image', ref: 'main', track: 'main' },
    reqId,
  );
  await ctx.b1.waitFor(new RegExp(`refused a build request from "${ctx.mesh.prefix.replace('.', '\\.')}node\\.web1"`));
  assert.not.match(ctx.b1.output(), new RegExp(`${reqId}: started`));
});

B('only builders may answer, and a request is answered once (B1)', async (ctx) => {
  const fake = {
    v: 1,
    id: ctx.failedId,
    kind: 'result',
    ok: true,
    commit: 'a'.repeat(40),
    image: `${ctx.registry.addr}/broken`,
    digest: `sha256:${'b'.repeat(64)}`,
  };
  const node = JSON.parse(readFileSync(join(ctx.web1Dir, 'identity.json'), 'utf8'));
  let mark = ctx.serve.output().length;
  await publishAs(ctx, node.broker.user, node.password, 'build.result', fake, ctx.failedId);
  await ctx.serve.waitFor(
    new RegExp(
      `build\\.result: dropped one from "${ctx.mesh.prefix.replace('.', '\\.')}node\\.web1", which is not a builder account`,
    ),
    20_000,
    mark,
  );
  const b1 = credentialOf(ctx.b1);
  mark = ctx.serve.output().length;
  await publishAs(ctx, b1.broker.user, b1.password, 'build.result', fake, ctx.failedId);
  await ctx.serve.waitFor(new RegExp(`request ${ctx.failedId} was already answered`), 20_000, mark);
  const rows = await ctx.mesh.store
    .admin`select ok, digest from catalogue.build_result where request_id = ${ctx.failedId}::uuid`;
  assert.equal(
    [...rows].map((x) => ({ ...x })),
    [{ ok: false, digest: null }],
  );
  assert.is(row(await list(ctx), 'broken').origin, 'not built yet');
  await until('nothing left on the control queue', async () => {
    return (await waiting(ctx.mesh, 'mesh.control')) === 0;
  });
});

B(
  'one build at a time per builder: of two waiting together, the second starts only after the first is answered (B1)',
  async (ctx) => {
    await ctx.src.commit({ 'slow/Containerfile': `FROM ${BASE_IMAGE}\nRUN sleep 2\n` }, 'slow');
    for (const m of ['one', 'two'])
      await cli(
        ctx.mesh,
        'module',
        'source',
        m,
        '--git',
        ctx.src.url,
        '--path',
        'slow',
        '--ref',
        'main',
        '--image',
        `${ctx.registry.addr}/${m}`,
      );
    // Both requests wait on the queue before any builder is there, so the one that comes is offered both at once.
    await ctx.b1.stop();
    const builds = ['one', 'two'].map((m) => ctx.mesh.cli(['build', m, '--json', '--timeout', '300s']));
    await until(
      'both requests queued',
      async () => {
        return (await waiting(ctx.mesh, 'mesh.build')) === 2;
      },
      120_000,
    );
    const b2 = await startBuilder(ctx.mesh, 'b2', ctx.registry.addr, ctx.st);
    try {
      for (const r of await Promise.all(builds)) assert.is(r.code, 0, r.stderr);
      // The builder's own account, in the order it happened: started, answered, started, answered.
      const said = b2
        .output()
        .split('\n')
        .map((l) => / (one|two) [0-9a-f-]{36}: (started on builder|answered)/.exec(l))
        .filter((m) => m !== null)
        .map((m) => `${m[1]} ${m[2] === 'answered' ? 'answered' : 'started'}`);
      assert.equal(
        said.map((x) => x.split(' ')[1]),
        ['started', 'answered', 'started', 'answered'],
        said.join(', '),
      );
      assert.is(said[0]!.split(' ')[0], said[1]!.split(' ')[0], 'the one answered first is the one started first');
    } finally {
      await b2.stop();
    }
  },
);

B.run();
