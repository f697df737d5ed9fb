// `mesh console --tls-cert --tls-key`: the console served over HTTPS, as an
// operator runs it beyond loopback. The session cookie is then Secure (a
// browser never sends it over plain HTTP), besides HttpOnly and
// SameSite=Strict, and it opens the console's JSON over TLS. The certificate
// is pinned as the trusted one: nothing here skips verification.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { request } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { freshMesh, MESH, spawnProc, type Mesh, type Proc } from '../harness/mesh.js';
import { makeCertificate } from '../harness/rabbitmq.js';

interface Ctx {
  mesh: Mesh;
  console: Proc;
  base: string;
  dir: string;
  ca: Buffer;
}
const T = suite<Ctx>('the console over TLS');

T.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.dir = mkdtempSync(join(tmpdir(), 'mesh-console-tls-'));
  const { cert, key } = await makeCertificate(ctx.dir, '127.0.0.1');
  ctx.ca = readFileSync(cert);
  ctx.console = spawnProc(
    process.execPath,
    [MESH, 'console', '--listen', '127.0.0.1:0', '--tls-cert', cert, '--tls-key', key],
    { ...ctx.mesh.env, ...ctx.mesh.store.consoleEnv },
  );
  ctx.base = (await ctx.console.waitFor(/serving (https:\/\/\S+)/, 30_000))[1]!;
});
T.after(async (ctx) => {
  await ctx.console?.stop();
  await ctx.mesh?.stop();
  if (ctx.dir) rmSync(ctx.dir, { recursive: true, force: true });
});

/** One GET over TLS trusting only the console's certificate (issued to an address, so its name is not checked). */
function get(
  ctx: Ctx,
  url: string,
  cookie?: string,
  form?: string,
): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        ca: ctx.ca,
        checkServerIdentity: () => undefined,
        method: form === undefined ? 'GET' : 'POST',
        headers: {
          ...(cookie ? { cookie } : {}),
          ...(form === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
        },
        timeout: 10_000,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url} within 10 s`)));
    req.on('error', reject);
    req.end(form);
  });
}

T(
  'served over TLS, a link signs in with a Secure, HttpOnly, SameSite=Strict cookie that opens the console',
  async (ctx) => {
    const port = new URL(ctx.base).port;
    const r = await ctx.mesh.cli(['console', 'token', '--listen', `127.0.0.1:${port}`, '--tls', '--json']);
    assert.is(r.code, 0, r.stderr);
    const link = JSON.parse(r.stdout).link as string;
    assert.match(link, /^https:\/\/127\.0\.0\.1:\d+\/signin\?token=/);
    const page = await get(ctx, link);
    assert.is(page.status, 200, "the link's page");
    assert.is(page.headers['set-cookie'], undefined, "the link's GET spends nothing");
    const u = new URL(link);
    const signed = await get(ctx, `${u.origin}/signin`, undefined, u.search.slice(1));
    assert.is(signed.status, 303);
    const set = String(signed.headers['set-cookie'] ?? '');
    const attrs = set.split(';').map((a) => a.trim());
    assert.ok(attrs.includes('Secure'), `the cookie is Secure: ${attrs.slice(1).join('; ')}`);
    assert.ok(attrs.includes('HttpOnly'));
    assert.ok(attrs.includes('SameSite=Strict'));
    const cookie = attrs[0]!;
    assert.is((await get(ctx, `${ctx.base}/api/fleet`, cookie)).status, 200, 'the cookie opens the console');
    assert.is((await get(ctx, `${ctx.base}/api/fleet`)).status, 401, 'nothing without it');
  },
);

T.run();
