// Rollout in waves, on real servers with twenty real hosts: the
// changes are held, released in waves 1,25%,100%; a node of the second wave
// cannot apply, so the rollout halts and the third wave is never sent; serve
// is killed, the machine fixed, a new serve resumes the rollout to the end.
// Then an abort: every node reached gets the declaration it held before, and
// the changes are held again.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshMesh, type Mesh, type Proc, type Host, type CliResult } from '../harness/mesh.js';
import { root, until as untilShort } from '../declare/helpers.js';
import { b64 } from '../../src/crypto/keys.js';

const N = 20;
const names = Array.from({ length: N }, (_, i) => `n${String(i + 1).padStart(2, '0')}`);
interface Ctx {
  mesh: Mesh;
  serve: Proc;
  roots: Map<string, string>;
  hosts: Map<string, { host: Host; proc: Proc }>;
  failing: string;
  wave2: string[];
  wave3: string[];
}
const R = suite<Ctx>('rollout: hold, waves, halt, resume, abort');
const until = <T>(what: string, f: () => Promise<T | undefined | null | false>) => untilShort(what, f, 120_000);

const file = (dir: string, name: string, text: string) => ({
  kind: 'file',
  path: join(dir, name),
  content: b64(Buffer.from(text)),
  mode: '0644',
});
const moduleFor = (ctx: Ctx, node: string, version: number) => {
  const dir = ctx.roots.get(node)!;
  const resources = [
    file(dir, 'app.conf', `version ${version}\n`),
    ...(version >= 2 ? [file(dir, `extra${version}.conf`, `extra ${version}\n`)] : []),
  ];
  const f = join(ctx.mesh.home, `app-${node}.json`);
  writeFileSync(f, JSON.stringify({ name: `app-${node}`, resources }));
  return f;
};
const ok = (r: CliResult) => {
  assert.is(r.code, 0, r.stderr);
  return r.stdout;
};
const refused = (r: CliResult, code: string) => {
  assert.is(r.code, 1, `expected ${code}, got exit ${r.code}: ${r.stdout}`);
  assert.match(r.stderr, new RegExp(`\\(${code}\\)`));
  return r.stderr;
};
const status = async (ctx: Ctx) =>
  JSON.parse(ok(await ctx.mesh.cli(['rollout', 'status', '--json']))) as {
    id: number;
    state: string;
    wave: number;
    reason: string | null;
    applied: number;
    failing: number;
    nodes: { node: string; wave: number; position: number; state: string; why: string }[];
  };
const newest = async (ctx: Ctx, node: string) =>
  Number((await ctx.mesh.store.admin`select max(serial) as s from assignment.declaration where node = ${node}`)[0]!.s);
const content = (ctx: Ctx, node: string, name = 'app.conf') => {
  try {
    return readFileSync(join(ctx.roots.get(node)!, name), 'utf8');
  } catch {
    return null;
  }
};
const failingListed = async (ctx: Ctx, node: string) =>
  (JSON.parse(ok(await ctx.mesh.cli(['node', 'list', '--json']))) as { name: string; failing: number }[]).find(
    (x) => x.name === node,
  )!.failing;
/** The canary order SQL promises: pinned first, then by sha256 of the name. */
const byHash = (xs: string[]) =>
  [...xs].sort((a, b) =>
    createHash('sha256').update(a).digest('hex').localeCompare(createHash('sha256').update(b).digest('hex')),
  );

R.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  ctx.roots = new Map();
  ctx.hosts = new Map();
  // The canary is pinned; wave 2 (25% of 20 = 5 reached) is the next four by hash; the failing node is one of them.
  const rest = byHash(names.filter((n) => n !== 'n01'));
  ctx.wave2 = rest.slice(0, 4);
  ctx.wave3 = rest.slice(4);
  ctx.failing = ctx.wave2[1]!;
  await Promise.all(
    names.map(async (n) => {
      ctx.roots.set(n, root());
      // Reconcile every 2 s: a fixed machine is found fixed without a new declaration. The failing node does not
      // look again by itself: it is fixed and its agent restarted, so what it says before and after is known.
      ctx.hosts.set(
        n,
        await ctx.mesh.joined(n, {
          MESH_HOST_ROOTS: ctx.roots.get(n)!,
          MESH_HOST_RECONCILE_SECONDS: n === ctx.failing ? '3600' : '2',
        }),
      );
    }),
  );
  for (const n of names) {
    ok(await ctx.mesh.cli(['module', 'add', moduleFor(ctx, n, 1)]));
    ok(await ctx.mesh.cli(['assign', `app-${n}`, n]));
  }
  await until('every node holds version 1', async () => names.every((n) => content(ctx, n) === 'version 1\n'));
});

R.after(async (ctx) => {
  await ctx.mesh?.stop();
  for (const d of ctx.roots?.values() ?? []) rmSync(d, { recursive: true, force: true });
});

R('nothing is held yet: start, pause and release are refused with their codes', async (ctx) => {
  assert.match(refused(await ctx.mesh.cli(['rollout', 'start']), 'MSH24'), /mesh rollout hold/);
  // A limit the CLI cannot read is refused with the code of a limit the store cannot use, before the store is asked.
  assert.match(
    refused(await ctx.mesh.cli(['rollout', 'start', '--max-failing', 'some']), 'MSH25'),
    /give 0 to halt on the first failure/,
  );
  assert.match(refused(await ctx.mesh.cli(['rollout', 'pause']), 'MSH24'), /no change is held/);
  refused(await ctx.mesh.cli(['rollout', 'release']), 'MSH24');
  assert.match(ok(await ctx.mesh.cli(['rollout', 'status'])), /no rollout yet/);
});

R('a hold: a second is refused, and a start with no change held', async (ctx) => {
  assert.match(ok(await ctx.mesh.cli(['rollout', 'hold'])), /holding changes \(rollout \d+\)/);
  refused(await ctx.mesh.cli(['rollout', 'hold']), 'MSH23');
  refused(await ctx.mesh.cli(['rollout', 'start']), 'MSH27');
  assert.match(refused(await ctx.mesh.cli(['rollout', 'pause']), 'MSH29'), /rollout \d+ is holding: it cannot pause/);
});

R(
  'changes made while holding reach no node; plan --all shows them; an explicit declare of one is refused',
  async (ctx) => {
    const before = new Map(await Promise.all(names.map(async (n) => [n, await newest(ctx, n)] as const)));
    mkdirSync(join(ctx.roots.get(ctx.failing)!, 'extra2.conf', 'in-the-way'), { recursive: true });
    // Each module is placed on its own node, and a module change composes only that node (W2): it alone is said held.
    for (const n of names)
      assert.match(
        ok(await ctx.mesh.cli(['module', 'add', moduleFor(ctx, n, 2)])),
        new RegExp(
          `nothing re-declared now\\nheld by the rollout: ${n} \\(mesh plan --all shows the change; mesh rollout start releases it\\)`,
        ),
      );
    const plan = JSON.parse(ok(await ctx.mesh.cli(['plan', '--all', '--json']))) as { node: string }[];
    assert.equal(plan.map((x) => x.node).sort(), names);
    assert.match(refused(await ctx.mesh.cli(['declare', 'n05']), 'MSH28'), /held by rollout/);
    for (const n of names) assert.is(await newest(ctx, n), before.get(n), `${n} got a new declaration while held`);
    assert.ok(names.every((n) => content(ctx, n) === 'version 1\n'));
  },
);

R('waves, waits and canaries that cannot be used are refused, naming the form', async (ctx) => {
  assert.match(
    refused(await ctx.mesh.cli(['rollout', 'start', '--waves', '1,50%']), 'MSH25'),
    /waves whose last reaches 10 of the 20 nodes: end the waves at every node/,
  );
  assert.match(
    refused(await ctx.mesh.cli(['rollout', 'start', '--waves', '1,ten']), 'MSH25'),
    /the wave 'ten': it is not a count or a share/,
  );
  assert.match(
    refused(await ctx.mesh.cli(['rollout', 'start', '--waves', '50%,1,100%']), 'MSH25'),
    /the wave 1: it reaches fewer nodes \(1\) than the one before it \(10\)/,
  );
  refused(await ctx.mesh.cli(['rollout', 'start', '--wait-healthy', '0s']), 'MSH25');
  assert.match(
    refused(await ctx.mesh.cli(['rollout', 'start', '--first', 'nobody']), 'MSH26'),
    /the canary nobody has no held change/,
  );
  assert.is((await status(ctx)).state, 'holding');
});

R(
  'a node of the second wave cannot apply: the rollout halts naming it, and the third wave is never sent',
  async (ctx) => {
    const from = new Map(await Promise.all(names.map(async (n) => [n, await newest(ctx, n)] as const)));
    const started = ok(
      await ctx.mesh.cli(['rollout', 'start', '--waves', '1,25%,100%', '--wait-healthy', '2m', '--first', 'n01']),
    );
    assert.match(started, /rollout \d+ is rolling at wave 1\nwave 1: n01\n/, started);
    const s = await until('the rollout halts', async () => {
      const x = await status(ctx);
      return x.state === 'halted' && x;
    });
    // Deterministic canaries: pinned first, then by the hash of the name.
    assert.equal(
      s.nodes.map((x) => x.node),
      ['n01', ...ctx.wave2, ...ctx.wave3],
    );
    assert.equal(
      s.nodes.map((x) => x.wave),
      [1, 2, 2, 2, 2, ...ctx.wave3.map(() => 3)],
    );
    assert.is(s.wave, 2);
    assert.match(
      s.reason!,
      new RegExp(
        `1 failing \\(at most 0 allowed\\): ${ctx.failing}: declaration \\d+ could not apply file:.*extra2\\.conf`,
      ),
    );
    assert.equal(
      s.nodes.filter((x) => x.state === 'failing').map((x) => x.node),
      [ctx.failing],
    );
    assert.is(await failingListed(ctx, ctx.failing), 1, 'mesh node list counts the failed resource');
    const text = ok(await ctx.mesh.cli(['rollout', 'status']));
    assert.match(text, /halted at wave 2 of 3 \(1,25%,100%\)/);
    assert.match(text, /\n5 of 20 released: 4 applied, 1 failing, 0 waiting\n/);
    assert.match(text, new RegExp(`why: .*${ctx.failing}`));
    // A DBA's view says the same.
    const [v] = await ctx.mesh.store
      .admin`select state, failing, released from assignment.rollout_status where id = ${s.id}`;
    assert.equal({ ...v }, { state: 'halted', failing: 1, released: 5 });
    // The others of waves 1 and 2 applied; wave 3 is still at its old serial and its old file.
    for (const n of ['n01', ...ctx.wave2.filter((x) => x !== ctx.failing)])
      assert.is(content(ctx, n), 'version 2\n', n);
    await new Promise((r) => setTimeout(r, 3000));
    for (const n of ctx.wave3) {
      assert.is(await newest(ctx, n), from.get(n), `${n} of wave 3 was declared`);
      assert.is(content(ctx, n), 'version 1\n', n);
    }
    assert.is((await status(ctx)).state, 'halted');
  },
);

R(
  'serve killed, the machine fixed, a new serve and resume: the rollout completes, every node at its newest serial',
  async (ctx) => {
    await ctx.serve.stop('SIGKILL');
    // Resumed before the node says anything new: its failure is old news, the wave waits for its next word.
    const resumed = ok(await ctx.mesh.cli(['rollout', 'resume']));
    assert.match(resumed, /rollout \d+ is rolling at wave 2\n/, resumed);
    const waiting = (await status(ctx)).nodes.find((x) => x.node === ctx.failing)!;
    assert.is(waiting.state, 'waiting');
    assert.match(waiting.why, /could not apply .*extra2\.conf.* \(before the resume: waiting for a clean report\)/);
    // Fixed, and its agent restarted: it applies what it holds and says so.
    rmSync(join(ctx.roots.get(ctx.failing)!, 'extra2.conf'), { recursive: true, force: true });
    const h = ctx.hosts.get(ctx.failing)!;
    await h.proc.stop();
    h.proc = h.host.run();
    await h.proc.waitFor(/connected to /);
    ctx.serve = await ctx.mesh.serve();
    await until('wave 3 is out', async () => (await status(ctx)).wave === 3);
    // Killed again with wave 3 out: the next serve picks the rollout up from SQL.
    await ctx.serve.stop('SIGKILL');
    ctx.serve = await ctx.mesh.serve();
    const s = await until('the rollout is done', async () => {
      const x = await status(ctx);
      return x.state === 'done' && x;
    });
    assert.is(s.applied, N);
    assert.is(await failingListed(ctx, ctx.failing), 0, 'the clean report cleared the failure');
    for (const n of names) {
      assert.is(content(ctx, n), 'version 2\n', n);
      assert.is(content(ctx, n, 'extra2.conf'), 'extra 2\n', n);
      const [d] = await ctx.mesh.store
        .admin`select acknowledged_at is not null as applied from assignment.declaration where node = ${n} order by serial desc limit 1`;
      assert.ok(d!.applied, `${n}'s newest declaration is not applied`);
    }
    // Every step is history.
    const log = JSON.parse(ok(await ctx.mesh.cli(['log', '--kind', 'rollout', '--json']))) as {
      detail: { state: string; wave: number; reason?: string };
    }[];
    const steps = log.map((e) => `${e.detail.state} ${e.detail.wave}`);
    for (const want of ['holding 0', 'rolling 0', 'rolling 1', 'rolling 2', 'halted 2', 'rolling 3', 'done 3'])
      assert.ok(steps.includes(want), `no ${want} in ${steps.join(', ')}`);
    assert.match(log.find((e) => e.detail.state === 'halted')!.detail.reason!, new RegExp(ctx.failing));
  },
);

R('abort: the nodes reached get the declaration they held before, and the changes are held again', async (ctx) => {
  const [a, b, c] = ['n01', ctx.wave2[0]!, ctx.wave3[0]!];
  ok(await ctx.mesh.cli(['rollout', 'hold']));
  mkdirSync(join(ctx.roots.get(b)!, 'extra3.conf', 'in-the-way'), { recursive: true });
  for (const n of [a, b, c]) ok(await ctx.mesh.cli(['module', 'add', moduleFor(ctx, n, 3)]));
  const before = await newest(ctx, c);
  ok(await ctx.mesh.cli(['rollout', 'start', '--waves', '1,2,100%', '--first', `${a},${b}`]));
  await until('halted on b', async () => (await status(ctx)).state === 'halted');
  assert.is(content(ctx, a), 'version 3\n');
  const out = ok(await ctx.mesh.cli(['rollout', 'abort', '--why', 'b cannot take extra3']));
  assert.match(out, new RegExp(`aborted; restored ${a}, ${b}; the changes are held again`));
  await until(
    'a is back at version 2',
    async () => content(ctx, a) === 'version 2\n' && content(ctx, a, 'extra3.conf') === null,
  );
  const s = await status(ctx);
  assert.is(s.state, 'holding');
  assert.is((s as unknown as { pending: number }).pending, 3);
  assert.is(await newest(ctx, c), before, 'c, never reached, was declared');
  const [old] = await ctx.mesh.store.admin`select state, reason from assignment.rollout_status where id = ${s.id - 1}`;
  assert.equal({ ...old }, { state: 'aborted', reason: 'b cannot take extra3' });
  // Lifting the hold sends every held change at once.
  rmSync(join(ctx.roots.get(b)!, 'extra3.conf'), { recursive: true, force: true });
  assert.match(ok(await ctx.mesh.cli(['rollout', 'release'])), /released; re-declaring/);
  await until('all three hold version 3', async () => [a, b, c].every((n) => content(ctx, n) === 'version 3\n'));
});

R.run();
