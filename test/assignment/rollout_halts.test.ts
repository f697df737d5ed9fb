// Rollouts (C1) on real servers with three real hosts: a later wave stays held
// once the rollout started, whatever else declares meanwhile (an unrelated
// command, an explicit declare, serve signing again); a wave that does not
// report healthy within --wait-healthy halts the rollout naming the late node;
// a node that refuses the rollout's declaration is failing at once, long
// before its wait runs out, and counts against --max-failing.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshMesh, type Mesh, type Proc, type Host, type CliResult } from '../harness/mesh.js';
import { root, until as untilShort } from '../declare/helpers.js';
import { inject } from '../declare/helpers.js';
import { envelope } from '../../src/assignment/declare.js';
import { bodyText, fresh } from '../../src/wire/declaration.js';
import { readEnvelope, LIMITS } from '../../src/wire/envelope.js';
import { b64 } from '../../src/crypto/keys.js';

const names = ['a1', 'a2', 'a3'];
interface Ctx {
  mesh: Mesh;
  serve: Proc;
  roots: Map<string, string>;
  hosts: Map<string, { host: Host; proc: Proc }>;
}
const R = suite<Ctx>('rollout: a later wave held, a late wave and a refusing node halt it');
const until = <T>(what: string, f: () => Promise<T | undefined | null | false>) => untilShort(what, f, 60_000);

interface Status {
  id: number;
  state: string;
  wave: number;
  reason: string | null;
  nodes: { node: string; wave: number; state: string; why: string; from_serial: number }[];
}
const ok = (r: CliResult) => {
  assert.is(r.code, 0, r.stderr);
  return r.stdout;
};
const status = async (ctx: Ctx) => JSON.parse(ok(await ctx.mesh.cli(['rollout', 'status', '--json']))) as Status;
const halted = (ctx: Ctx) =>
  until('the rollout halts', async () => {
    const s = await status(ctx);
    return s.state === 'halted' && s;
  });
const newest = async (ctx: Ctx, node: string) =>
  Number((await ctx.mesh.store.admin`select max(serial) as s from assignment.declaration where node = ${node}`)[0]!.s);
const content = (ctx: Ctx, node: string) => {
  try {
    return readFileSync(join(ctx.roots.get(node)!, 'app.conf'), 'utf8');
  } catch {
    return null;
  }
};
/** Module app-NODE at VERSION, added to the catalogue (which re-declares, or holds, its node's change). */
const version = async (ctx: Ctx, node: string, v: number) => {
  const f = join(ctx.mesh.home, `app-${node}.json`);
  const path = join(ctx.roots.get(node)!, 'app.conf');
  writeFileSync(
    f,
    JSON.stringify({
      name: `app-${node}`,
      resources: [{ kind: 'file', path, content: b64(Buffer.from(`version ${v}\n`)), mode: '0644' }],
    }),
  );
  return ok(await ctx.mesh.cli(['module', 'add', f]));
};
const stopHost = (ctx: Ctx, node: string) => ctx.hosts.get(node)!.proc.stop();
const startHost = async (ctx: Ctx, node: string) => {
  const h = ctx.hosts.get(node)!;
  h.proc = h.host.run();
  await h.proc.waitFor(/connected to /);
};
/** Lift the hold (every held change goes out at once) and wait until every node holds what it was declared. */
const releaseAll = async (ctx: Ctx, v: Record<string, number>) => {
  ok(await ctx.mesh.cli(['rollout', 'release']));
  await until(`every node holds ${JSON.stringify(v)}`, async () =>
    Object.entries(v).every(([n, x]) => content(ctx, n) === `version ${x}\n`),
  );
};

R.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  ctx.roots = new Map();
  ctx.hosts = new Map();
  for (const n of names) {
    ctx.roots.set(n, root());
    ctx.hosts.set(
      n,
      await ctx.mesh.joined(n, { MESH_HOST_ROOTS: ctx.roots.get(n)!, MESH_HOST_RECONCILE_SECONDS: '3600' }),
    );
    await version(ctx, n, 1);
    ok(await ctx.mesh.cli(['assign', `app-${n}`, n]));
  }
  await until('every node holds version 1', async () => names.every((n) => content(ctx, n) === 'version 1\n'));
});

R.after(async (ctx) => {
  await ctx.mesh?.stop();
  for (const d of ctx.roots?.values() ?? []) rmSync(d, { recursive: true, force: true });
});

R(
  'once started, a later wave stays held: an unrelated command, an explicit declare and serve signing again release nothing early',
  async (ctx) => {
    // Declarations that hold 10 s: serve (started again, to look at the lifetime every 1.25 s) signs each again
    // every 5 s while this test runs.
    ok(await ctx.mesh.cli(['freshness', '--lifetime', '10s']));
    await ctx.serve.stop();
    ctx.serve = await ctx.mesh.serve();
    ok(await ctx.mesh.cli(['declare', '--all']));
    ok(await ctx.mesh.cli(['rollout', 'hold']));
    // A module change composes only the nodes it is placed on (W2): each is held as it is made.
    assert.match(await version(ctx, 'a1', 2), /held by the rollout: a1 \(/);
    assert.match(await version(ctx, 'a2', 2), /held by the rollout: a2 \(/);
    // a1, the first wave, never reports: the rollout stays at wave 1 (its wait is long), and a2's wave is not due.
    await stopHost(ctx, 'a1');
    const started = ok(
      await ctx.mesh.cli(['rollout', 'start', '--waves', '1,100%', '--first', 'a1', '--wait-healthy', '10m']),
    );
    assert.match(started, /rollout \d+ is rolling at wave 1\nwave 1: a1\n/, started);
    const mark = ctx.hosts.get('a2')!.proc.output().length;
    const from = (await status(ctx)).nodes.find((n) => n.node === 'a2')!.from_serial;
    const [was] = await ctx.mesh.store
      .admin`select resources_hash from assignment.declaration where node = 'a2' and serial = ${from}`;

    // An unrelated change composes only what it touches (W2): a2's change stays held, not re-declared.
    const other = join(ctx.mesh.home, 'other.json');
    writeFileSync(other, JSON.stringify({ name: 'other', resources: [] }));
    assert.not.match(ok(await ctx.mesh.cli(['module', 'add', other])), /re-declaring[^\n]*\ba2\b/);
    // The operator's own declare of a held node is refused, naming it.
    const declared = await ctx.mesh.cli(['declare', 'a2']);
    assert.is(declared.code, 1, declared.stdout);
    assert.match(declared.stderr, /the change to a2 is held by rollout \d+, which is rolling.*\(MSH28\)/);

    // serve signs a2 again: a new serial, the resources it held, nothing of the held change.
    await until('a2 applied a declaration serve signed again, changing nothing', async () =>
      [
        ...ctx.hosts
          .get('a2')!
          .proc.output()
          .slice(mark)
          .matchAll(/applied declaration (\d+): 0 changed/g),
      ].some((m) => Number(m[1]) > from),
    );
    const carried = await ctx.mesh.store
      .admin`select serial::int from assignment.declaration where node = 'a2' and serial > ${from} and resources_hash <> ${was!.resources_hash}`;
    assert.equal(
      carried.map((r) => r.serial),
      [],
      'no declaration of a2 since the start carries its held change',
    );
    assert.is(content(ctx, 'a2'), 'version 1\n');
    const s = await status(ctx);
    assert.equal(
      { state: s.state, wave: s.wave, a2: s.nodes.find((n) => n.node === 'a2')!.state },
      { state: 'rolling', wave: 1, a2: 'held' },
    );

    ok(await ctx.mesh.cli(['freshness', '--lifetime', '7d']));
    await startHost(ctx, 'a1');
    await releaseAll(ctx, { a1: 2, a2: 2, a3: 1 });
    // Every node holds a declaration of the usual lifetime again (the next tests' waits are not about freshness).
    ok(await ctx.mesh.cli(['declare', '--all']));
  },
);

R('a wave that has not reported healthy within --wait-healthy halts the rollout, naming the late node', async (ctx) => {
  ok(await ctx.mesh.cli(['rollout', 'hold']));
  await version(ctx, 'a3', 3);
  await version(ctx, 'a2', 3);
  const a2 = await newest(ctx, 'a2');
  await stopHost(ctx, 'a3');
  ok(await ctx.mesh.cli(['rollout', 'start', '--waves', '1,100%', '--first', 'a3', '--wait-healthy', '2s']));
  const s = await halted(ctx);
  assert.is(s.wave, 1);
  assert.match(
    s.reason!,
    /^wave 1 did not report healthy within 00:00:02: a3: declaration \d+ not yet reported applied$/,
  );
  assert.equal(
    s.nodes.map((n) => `${n.node} ${n.state}`),
    ['a3 waiting', 'a2 held'],
  );
  assert.is(await newest(ctx, 'a2'), a2, 'the next wave was never declared');
  assert.match(ok(await ctx.mesh.cli(['rollout', 'status'])), /why: wave 1 did not report healthy within .*: a3: /);

  await startHost(ctx, 'a3');
  await releaseAll(ctx, { a1: 2, a2: 3, a3: 3 });
});

R(
  "a node that refuses the rollout's declaration is failing at once: the rollout halts on it with --max-failing 0, its wait far from over",
  async (ctx) => {
    // a2's host applies a genuine declaration of its own resources at a serial far above any the mesh will send,
    // handed to it while it runs (no recover tells the mesh of it): it refuses each later one as a replay.
    const [last] = await ctx.mesh.store
      .admin`select envelope from assignment.declaration where node = 'a2' order by serial desc limit 1`;
    const { text } = readEnvelope(last!.envelope as Buffer, LIMITS.declaration, 'declaration');
    const resources = JSON.stringify((JSON.parse(text) as { resources: unknown }).resources);
    const far = envelope(bodyText(ctx.mesh.signer.mesh, 'a2', 1_000_000, resources, fresh()), ctx.mesh.signer);
    const mark = ctx.hosts.get('a2')!.proc.output().length;
    await inject(ctx.mesh, 'a2', far);
    await ctx.hosts.get('a2')!.proc.waitFor(/applied declaration 1000000\b/, 30_000, mark);
    ok(await ctx.mesh.cli(['declare', 'a2']));
    await ctx.hosts.get('a2')!.proc.waitFor(/refused a declaration: replayed: serial \d+ is not newer than 1000000/);
    ok(await ctx.mesh.cli(['rollout', 'hold']));
    await version(ctx, 'a2', 4);
    await version(ctx, 'a1', 4);
    const a1 = await newest(ctx, 'a1');
    ok(
      await ctx.mesh.cli([
        'rollout',
        'start',
        '--waves',
        '1,100%',
        '--first',
        'a2',
        '--wait-healthy',
        '10m',
        '--max-failing',
        '0',
      ]),
    );
    const s = await halted(ctx);
    assert.match(
      s.reason!,
      /^1 failing \(at most 0 allowed\): a2: refused declaration (\d+): replayed: serial \1 is not newer than 1000000/,
    );
    assert.equal(
      s.nodes.map((n) => `${n.node} ${n.state}`),
      ['a2 failing', 'a1 held'],
    );
    assert.is(await newest(ctx, 'a1'), a1, 'the next wave was never declared');
    assert.is(content(ctx, 'a2'), 'version 3\n', 'a2 applied nothing');
  },
);

R.run();
