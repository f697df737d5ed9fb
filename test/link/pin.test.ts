// L2: a wrong certificate is said in full every time, never folded into a
// retry count: what answered is not the mesh this node joined.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { spawnProc, MESH_HOST, type Proc } from '../harness/mesh.js';
import { impostor, identityFor, lines, type FakeBroker } from './fake_broker.js';
import { until } from '../declare/helpers.js';

interface Ctx {
  proc?: Proc;
  dir?: string;
  srv?: FakeBroker;
}
const P = suite<Ctx>('wrong certificate (L2)', {});

P.after(async (ctx) => {
  await ctx.proc?.stop();
  await ctx.srv?.close();
  if (ctx.dir) rmSync(ctx.dir, { recursive: true, force: true });
});

P('every attempt against a broker with another certificate says so in full', async (ctx) => {
  const srv = await impostor();
  ctx.srv = srv;
  const pinned = 'AB:'.repeat(31) + 'AB';
  ctx.dir = await identityFor(srv.port, pinned);
  ctx.proc = spawnProc(process.execPath, [MESH_HOST, 'run'], {
    ...process.env,
    MESH_HOST_DIR: ctx.dir,
    MESH_HOST_ROOTS: ctx.dir,
    MESH_HOST_BACKOFF_MIN_SECONDS: '0.2',
    MESH_HOST_BACKOFF_MAX_SECONDS: '0.4',
  });
  const full =
    `refusing the broker: the broker at 127.0.0.1:${srv.port} presented certificate ${srv.fingerprint}, but this node pins ${pinned}: ` +
    'what answered is not the mesh this node joined. No retry will fix this; if the mesh replaced its certificate, enrol again with a new token.';
  await until('four refusals', async () => lines(ctx.proc!.output(), /refusing the broker/).length >= 4);
  const said = lines(ctx.proc.output(), /refusing the broker/);
  for (const l of said) assert.ok(l.endsWith(full), `said in full every time, not: ${l}`);
  assert.is(lines(ctx.proc.output(), /cannot reach the broker/).length, 0, 'never told as the network being down');
});

P.run();
