// B3 through the real broker and serve: a builder account answers a build
// request naming a registry other than the one its module was assigned. serve
// refuses it with its code, the request is recorded as a failed build, and the
// module keeps no image from it; the assigned repository is recorded. And a
// builder's enrolment replaces the password its printed line carried.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomUUID } from 'node:crypto';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { connectBroker } from '../../src/broker/connect.js';
import { splitHostPort } from '../../src/wire/names.js';
import { publish } from '../../src/broker/publish.js';
import { EXCHANGE } from '../../src/broker/topology.js';
import { BUILD_RESULT, writeMessage } from '../../src/wire/build.js';
import { readEnrolLine } from '../../src/wire/builder_line.js';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { runCli } from '../harness/mesh.js';
import { enrolBuilder } from '../../src/builder/enrol.js';
import { MeshError } from '../../src/sys/errors.js';
import { within } from '../harness/within.js';

const MESH_BUILDER = fileURLToPath(new URL('../../src/builder/cli.js', import.meta.url));

/** `mesh builder add NAME`: the line it printed. */
async function added(mesh: Mesh, name: string): Promise<string> {
  const r = await mesh.cli(['builder', 'add', name, '--json']);
  assert.is(r.code, 0, r.stderr);
  return (JSON.parse(r.stdout) as { line: string }).line;
}

/** Does the broker take this account and password? */
async function logsIn(line: ReturnType<typeof readEnrolLine>, password: string): Promise<boolean> {
  try {
    const conn = await connectBroker(
      { ...splitHostPort(line.broker), vhost: line.vhost, user: line.user, password, fingerprint: line.fingerprint },
      { name: 'a password check' },
    );
    await conn.close().catch(() => {});
    return true;
  } catch (err) {
    if (/ACCESS[-_]REFUSED/.test((err as Error).message)) return false;
    throw err;
  }
}

const B = suite<{ mesh: Mesh; serve: Proc }>('builds pinned to their module repository (B3)');
B.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
});
B.after(async (ctx) => {
  await ctx.mesh.stop();
});

/** Answer a fresh request for MODULE as builder NAME, a success naming IMAGE. */
async function answer(mesh: Mesh, name: string, module: string, image: string): Promise<string> {
  const added = await mesh.cli(['builder', 'add', name, '--json']);
  assert.is(added.code, 0, added.stderr);
  const line = readEnrolLine((JSON.parse(added.stdout) as { line: string }).line);
  const id = randomUUID();
  await mesh.store.admin`select * from catalogue.request_build(${id}::uuid, ${module}::text, null::text)`;
  const conn = await connectBroker(
    {
      ...splitHostPort(line.broker),
      vhost: line.vhost,
      user: line.user,
      password: line.password,
      fingerprint: line.fingerprint,
    },
    { name: 'a builder' },
  );
  try {
    const ch = await conn.createConfirmChannel();
    const news = {
      v: 1,
      id,
      kind: 'result',
      ok: true,
      commit: 'c'.repeat(40),
      image,
      digest: `sha256:${'d'.repeat(64)}`,
    } as const;
    await publish(ch, EXCHANGE, BUILD_RESULT, writeMessage(news), {
      mandatory: true,
      userId: line.user,
      correlationId: id,
      type: BUILD_RESULT,
    });
  } finally {
    await conn.close().catch(() => {});
  }
  return id;
}

B('a build result naming another registry is refused with MSHU6 and recorded as a failed build', async (ctx) => {
  const { mesh, serve } = ctx;
  const set = await mesh.cli([
    'module',
    'source',
    'web',
    '--git',
    'https://git.example/web.git',
    '--image',
    'reg.example:5000/web',
  ]);
  assert.is(set.code, 0, set.stderr);
  assert.match(set.stdout, /its images only from reg\.example:5000\/web\n$/);
  const mark = serve.output().length;
  const id = await answer(mesh, 'b1', 'web', 'evil.example:5000/web');
  await serve.waitFor(
    new RegExp(
      `build\\.result: request ${id} built by b1 names image repository evil\\.example:5000/web, not the one assigned to its module; recorded as a failed build: .* \\(MSHU6\\)\\.`,
    ),
    20_000,
    mark,
  );
  const [s] = await mesh.store.admin`select state, ok, error from catalogue.build_status where id = ${id}::uuid`;
  assert.equal(
    { ...s },
    {
      state: 'failed',
      ok: false,
      error:
        'refused: the build names image repository evil.example:5000/web, and module web takes images only from reg.example:5000/web',
    },
  );
  const [m] = await mesh.store.admin`select count(*)::int as n from catalogue.module where name = 'web'`;
  assert.is(m!.n, 0, 'no module was made from it');
  // The assigned repository is taken.
  const good = await answer(mesh, 'b2', 'web', 'reg.example:5000/web');
  await serve.waitFor(new RegExp(`build\\.result: request ${good} built by b2: reg\\.example:5000/web@`), 20_000, mark);
});

B('a source --image that is not REGISTRY/REPOSITORY is refused with MSHU7', async ({ mesh }) => {
  const r = await mesh.cli(['module', 'source', 'api', '--git', 'g', '--image', 'reg.example:5000']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /--image "reg\.example:5000" is not REGISTRY\/REPOSITORY: .* \(MSHU7\)\.\n$/);
});

B("a builder's enrolment replaces the password its line carried: the printed line stops working", async (ctx) => {
  const { mesh, serve } = ctx;
  const text = await added(mesh, 'b7');
  const line = readEnrolLine(text);
  const dir = mkdtempSync(join(tmpdir(), 'mesh-builder-b7-'));
  const mark = serve.output().length;
  const r = await runCli(MESH_BUILDER, ['enrol'], { PATH: process.env.PATH, MESH_BUILDER_DIR: dir }, text);
  assert.is(r.code, 0, r.stderr);
  const kept = JSON.parse(readFileSync(join(dir, 'credential.json'), 'utf8')) as { password: string };
  assert.is.not(kept.password, line.password, 'the builder keeps a password of its own');
  assert.ok(await logsIn(line, kept.password), 'its own password logs in');
  assert.not.ok(await logsIn(line, line.password), "the printed line's password no longer does");
  await serve.waitFor(/builder\.enrol: builder b7 replaced the password its line carried/, 20_000, mark);
});

B(
  'a builder whose password the control plane does not replace in time is refused with MSHU8, and keeps nothing',
  async (ctx) => {
    const { mesh, serve } = ctx;
    const text = await added(mesh, 'b8');
    const dir = mkdtempSync(join(tmpdir(), 'mesh-builder-b8-'));
    process.kill(serve.child.pid!, 'SIGSTOP');
    let err: unknown;
    try {
      // Its own deadline: an enrol that never gives up would otherwise hold serve stopped until the file's limit.
      await within('the builder to give up after its 2 s', 30_000, enrolBuilder(text, dir, { timeoutMs: 2000 }));
    } catch (e) {
      err = (e as Error).cause ?? e;
    } finally {
      process.kill(serve.child.pid!, 'SIGCONT');
    }
    assert.ok(err instanceof MeshError && err.code === 'MSHU8', String(err));
    assert.match((err as Error).message, /did not replace builder b8's password within 2s: .*mesh builder add b8/);
    assert.equal(readdirSync(dir), [], 'no credential was kept');
  },
);

B.run();
