// D6: the host puts drift back against its kept declaration every
// MESH_HOST_RECONCILE_SECONDS, with no message from the mesh, connected or
// not; the report says what was corrected.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freshMesh, type Mesh, type Proc, type Host } from '../harness/mesh.js';
import { freePort } from '../harness/ports.js';
import { addModule, cli, b64, root, until } from '../declare/helpers.js';

interface Ctx {
  mesh: Mesh;
  serve: Proc;
  host: Host;
  proc: Proc;
  root: string;
}
const D = suite<Ctx>('reconcile (D6)');

const conf = (ctx: Ctx) => join(ctx.root, 'web.conf');
const starts = (ctx: Ctx) =>
  existsSync(join(ctx.root, 'starts')) ? readFileSync(join(ctx.root, 'starts'), 'utf8').trim().split('\n').length : 0;
const servicePid = (ctx: Ctx): number | undefined => {
  try {
    return (JSON.parse(readFileSync(join(ctx.host.dir, 'services', 'web.pid'), 'utf8')) as { pid: number }).pid;
  } catch {
    return undefined;
  }
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const declarations = async (ctx: Ctx) =>
  Number((await ctx.mesh.store.admin`select count(*)::int as n from assignment.declaration where node = 'web1'`)[0]!.n);

D.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  ctx.root = root();
  const j = await ctx.mesh.joined('web1', {
    MESH_HOST_ROOTS: ctx.root,
    MESH_HOST_RECONCILE_SECONDS: '1',
    MESH_HOST_BACKOFF_MIN_SECONDS: '0.5',
    MESH_HOST_BACKOFF_MAX_SECONDS: '2',
  });
  ctx.host = j.host;
  ctx.proc = j.proc;
  await addModule(ctx.mesh, 'web', [
    { kind: 'file', path: conf(ctx), content: b64('v1'), mode: '0644' },
    {
      kind: 'service',
      name: 'web',
      exec: ['/bin/sh', '-c', `echo started >> ${join(ctx.root, 'starts')}; exec sleep 1000`],
    },
  ]);
  // Serial 1 was the node's firewall, at enrolment; the assignment owes 2.
  await cli(ctx.mesh, 'assign', 'web', 'web1');
  await ctx.proc.waitFor(/applied declaration 2\b/);
  await until('service started', async () => starts(ctx) === 1);
});

D.after(async (ctx) => {
  // A service outlives its host by design: end its process group here, read
  // before the host's dir (and its pid file) goes with the mesh.
  const pid = servicePid(ctx);
  await ctx.mesh.stop();
  if (pid) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  rmSync(ctx.root, { recursive: true, force: true });
});

D(
  'a declared file edited by hand is put back by the next reconcile, with no message from the mesh, and the report says so',
  async (ctx) => {
    const sent = await declarations(ctx);
    const mark = ctx.proc.output().length;
    const smark = ctx.serve.output().length;
    writeFileSync(conf(ctx), 'edited by hand');
    await until('file put back', async () => readFileSync(conf(ctx), 'utf8') === 'v1');
    await ctx.proc.waitFor(new RegExp(`reconciled declaration 2: put back file:${conf(ctx)}`), 10_000, mark);
    await ctx.serve.waitFor(new RegExp(`report: web1 put back file:${conf(ctx)}`), 10_000, smark);
    assert.not.match(
      ctx.proc.output().slice(mark),
      /applied declaration/,
      'no declaration applied: the reconcile did it',
    );
    assert.is(await declarations(ctx), sent, 'the mesh sent nothing');
  },
);

D('a declared service that died is started again and reported corrected', async (ctx) => {
  const pid = servicePid(ctx)!;
  assert.ok(pid && alive(pid));
  const smark = ctx.serve.output().length;
  process.kill(-pid, 'SIGKILL');
  await until('service started again', async () => starts(ctx) === 2);
  await ctx.serve.waitFor(/report: web1 put back service:web/, 10_000, smark);
  const again = servicePid(ctx)!;
  assert.is.not(again, pid);
  assert.ok(alive(again));
});

D('with the broker unreachable, drift is put back all the same', async (ctx) => {
  await ctx.proc.stop();
  // The same host, pointed at a port nothing listens on.
  const idPath = join(ctx.host.dir, 'identity.json');
  const saved = readFileSync(idPath, 'utf8');
  const id = JSON.parse(saved);
  id.broker.port = await freePort();
  // The list is what the link dials: the one broker, on that port.
  id.brokers = [{ host: id.broker.host, port: id.broker.port, fingerprint: id.broker.fingerprint }];
  writeFileSync(idPath, JSON.stringify(id), { mode: 0o600 });
  try {
    // Drift while stopped: the reconcile at start puts it back. Once it has,
    // the next drift can only be put back by the timer.
    writeFileSync(conf(ctx), 'edited while stopped');
    ctx.proc = ctx.host.run();
    await ctx.proc.waitFor(new RegExp(`reconciled declaration 2: put back file:${conf(ctx)}`));
    await ctx.proc.waitFor(/cannot reach the broker/);
    const mark = ctx.proc.output().length;
    writeFileSync(conf(ctx), 'edited while away');
    await ctx.proc.waitFor(new RegExp(`reconciled declaration 2: put back file:${conf(ctx)}`), 10_000, mark);
    assert.is(readFileSync(conf(ctx), 'utf8'), 'v1');
    assert.not.match(ctx.proc.output(), /connected to /);
  } finally {
    await ctx.proc.stop();
    writeFileSync(idPath, saved, { mode: 0o600 });
  }
});

D.run();
