// A builder dies mid-build (SIGKILL to it and everything it started, as a
// machine dying would). It acked nothing, so the broker hands the request to
// the next builder, which completes it; exactly one answer is recorded (B1).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freshMesh, spawnProc, MESH, type Mesh } from '../harness/mesh.js';
import { startRegistry, type Registry } from '../harness/registry.js';
import { cli, until } from '../declare/helpers.js';
import {
  baseTarball,
  storage,
  repo,
  startBuilder,
  BASE_IMAGE,
  waiting,
  type Storage,
  type Repo,
  type BuilderProc,
} from './helpers.js';

interface Ctx {
  mesh: Mesh;
  registry: Registry;
  tmp: string;
  stores: Storage[];
  builders: BuilderProc[];
  src: Repo;
}
const H = suite<Ctx>('a builder dies mid-build');

H.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  await ctx.mesh.serve();
  ctx.registry = await startRegistry();
  ctx.tmp = mkdtempSync(join(tmpdir(), 'mesh-build-test-'));
  const tar = await baseTarball(ctx.tmp);
  // Two machines: each builder its own podman storage.
  ctx.stores = [await storage(tar), await storage(tar)];
  ctx.builders = [];
  ctx.src = await repo();
});
H.after(async (ctx) => {
  for (const b of ctx.builders ?? []) await b.stop();
  await ctx.mesh?.stop();
  await ctx.registry?.stop();
  for (const s of ctx.stores ?? []) s.remove();
  if (ctx.src) rmSync(ctx.src.dir, { recursive: true, force: true });
  if (ctx.tmp) rmSync(ctx.tmp, { recursive: true, force: true });
});

H('the request goes to a second builder, which completes it; exactly one result is recorded (B1)', async (ctx) => {
  const commit = await ctx.src.commit(
    { Containerfile: `FROM ${BASE_IMAGE}\nRUN sleep 3\nRUN echo slow > /slow\n` },
    'slow',
  );
  await cli(ctx.mesh, 'module', 'source', 'slow', '--git', ctx.src.url, '--image', `${ctx.registry.addr}/slow`);
  const a = await startBuilder(ctx.mesh, 'ba', ctx.registry.addr, ctx.stores[0]!);
  ctx.builders.push(a);
  const requester = spawnProc(process.execPath, [MESH, 'build', 'slow', '--json', '--timeout', '180s'], ctx.mesh.env);
  await a.waitFor(/STEP 2\/3: RUN sleep 3/);
  await a.kill();
  const [mid] = await ctx.mesh.store.admin`select count(*)::int as n from catalogue.build_result`;
  assert.is(mid!.n, 0, 'the dead builder answered nothing');
  const b = await startBuilder(ctx.mesh, 'bb', ctx.registry.addr, ctx.stores[1]!);
  ctx.builders.push(b);
  await b.waitFor(/redelivered: an earlier attempt did not finish/);
  await requester.exited(180_000);
  assert.is(requester.child.exitCode, 0, requester.output());
  const answer = JSON.parse(requester.output().slice(requester.output().indexOf('{\n')));
  assert.is(answer.ok, true);
  assert.is(answer.builder, 'bb');
  assert.is(answer.commit, commit);
  assert.match(requester.output(), /\[ba\] started on builder ba/, 'the requester saw the first builder start');
  assert.match(requester.output(), /\[bb\] started on builder bb \(redelivered/, 'and the second take over');
  const results = await ctx.mesh.store.admin`select request_id, builder, ok from catalogue.build_result`;
  assert.equal(
    [...results].map((r) => ({ ...r })),
    [{ request_id: answer.id, builder: 'bb', ok: true }],
  );
  assert.is(await ctx.registry.manifestDigest('slow', answer.digest), answer.digest);
  await until('nothing left on the build queue: acked once answered', async () => {
    return (await waiting(ctx.mesh, 'mesh.build')) === 0;
  });
});

H.run();
