// L1 and the buffer the broker is: the real broker stopped and started again
// under a running host. The host retries with the backoff, saying why each
// time; what it applied stays in place throughout; it gets back in without
// being touched and applies at once a declaration published while it was
// away. Serve reconnects too. On a broker of this suite's own.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { privateMesh, outageEnv, stopFleet, type PrivateMesh } from './private_mesh.js';
import type { Proc, Host } from '../harness/mesh.js';
import { b64, cli, root, until } from '../declare/helpers.js';
import { writeFileSync } from 'node:fs';

interface Ctx {
  pm: PrivateMesh;
  serve: Proc;
  host: Host;
  proc: Proc;
  root: string;
}
const B = suite<Ctx>('broker restart (L1)');

B.before(async (ctx) => {
  ctx.pm = await privateMesh();
  ctx.root = root();
  ctx.serve = await ctx.pm.serve();
  const j = await ctx.pm.joined('web1', {
    ...outageEnv(ctx.root, 4),
    // The plain doubling: the test names each wait.
    MESH_HOST_BACKOFF_JITTER: 'none',
  });
  ctx.host = j.host;
  ctx.proc = j.proc;
});

B.after((ctx) => stopFleet(ctx, ctx.proc));

async function setModule(ctx: Ctx, content: string): Promise<void> {
  const f = join(ctx.pm.home, 'web.json');
  writeFileSync(
    f,
    JSON.stringify({
      name: 'web',
      resources: [{ kind: 'file', path: join(ctx.root, 'web.conf'), content: b64(content), mode: '0644' }],
    }),
  );
  await cli(ctx.pm, 'module', 'add', f);
}

/** Same bytes, same inode, same mtime: never removed or rewritten. */
const fingerprint = (p: string) => {
  const s = statSync(p);
  return `${s.ino}:${s.mtimeMs}:${readFileSync(p, 'utf8')}`;
};

B('the host rides out a broker restart and applies what was declared while it was away', async (ctx) => {
  const conf = join(ctx.root, 'web.conf');
  await setModule(ctx, 'v1');
  // Serial 1 was the node's firewall, at enrolment; the assignment owes 2.
  await cli(ctx.pm, 'assign', 'web', 'web1');
  await ctx.proc.waitFor(/applied declaration 2\b/);
  await until(
    'report of 2',
    async () =>
      (await ctx.pm.store.admin`select 1 from inventory.report where node = 'web1' and serial = 2`).length > 0,
  );
  const held = fingerprint(conf);
  const pid = ctx.proc.child.pid;

  const mark = ctx.proc.output().length;
  const smark = ctx.serve.output().length;
  await ctx.pm.rabbit.halt();
  const lost = await ctx.proc.waitFor(/lost the broker \((.+)\)\n.*next attempt in 0\.5s/, 20_000, mark);
  // Each failure after says why, and the waits double: 1, 2, 4.
  let at = mark + lost.index! + lost[0].length;
  for (const wait of ['1', '2', '4']) {
    const m = await ctx.proc.waitFor(
      new RegExp(
        `cannot reach the broker at 127\\.0\\.0\\.1:${ctx.pm.rabbit.amqpsPort} \\((.+)\\); attempt \\d+\\n.*next attempt in ${wait}s`,
      ),
      20_000,
      at,
    );
    assert.ok(m[1]!.trim().length > 0, 'a reason');
    at += m.index! + m[0].length;
  }
  assert.is(fingerprint(conf), held, 'applied file in place while the broker is down');
  await ctx.serve.waitFor(/serve: cannot reach the broker .*retrying/, 20_000, smark);

  // Away: held still, like a suspended machine, while the broker comes back
  // and the mesh publishes to it.
  ctx.proc.child.kill('SIGSTOP');
  try {
    await ctx.pm.rabbit.resume();
    await ctx.serve.waitFor(/serve: consuming mesh\.control/, 60_000, smark);
    await setModule(ctx, 'v2');
    // The module change itself owes web1 serial 3 (W2): in the outbox or already on its queue.
    const owed = JSON.parse(await cli(ctx.pm, 'outbox', '--json')) as { node: string; serial: number }[];
    const [d] = await ctx.pm.store
      .admin`select max(serial)::int as serial from assignment.declaration where node = 'web1'`;
    assert.is(d!.serial, 3, 'owed while the host was away');
    assert.ok(
      owed.every((o) => o.node === 'web1' && o.serial === 3),
      JSON.stringify(owed),
    );
    assert.is(fingerprint(conf), held, 'nothing applied while away');
  } finally {
    ctx.proc.child.kill('SIGCONT');
  }

  const back = ctx.proc.output().length;
  await ctx.proc.waitFor(/back in: connected to 127\.0\.0\.1:\d+ after \d+ failed attempt\(s\)/, 30_000, back);
  await ctx.proc.waitFor(/applied declaration 3\b/, 20_000, back);
  assert.is(readFileSync(conf, 'utf8'), 'v2');
  assert.is(ctx.proc.child.pid, pid, 'the same process: nobody touched it');
  assert.not.match(
    ctx.proc.output(),
    /[1-9]\d* removed|orphan|put back/,
    'nothing was removed or put back along the way',
  );
  // Serve came back too: the report of 3 is recorded.
  await until(
    'report of 3',
    async () =>
      (await ctx.pm.store.admin`select 1 from inventory.report where node = 'web1' and serial = 3`).length > 0,
  );
});

B.run();
