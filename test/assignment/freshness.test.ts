// Freshness: a declaration holds until its signed expiry; serve
// signs a current one again (new serial, same resources) at half its life; a
// host whose declaration expires while its link is cut keeps applying it,
// says it is stale, and is cleared by the declaration signed again. On a
// broker of this suite's own, stopped under the running host.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { privateMesh, outageEnv, stopFleet, type PrivateMesh } from '../link/private_mesh.js';
import type { Proc } from '../harness/mesh.js';
import { root, until as untilShort } from '../declare/helpers.js';
import { b64 } from '../../src/crypto/keys.js';

interface Ctx {
  pm: PrivateMesh;
  serve: Proc;
  root: string;
  host: Proc;
}
const F = suite<Ctx>('freshness: expiry, signing again, stale');
const until = <T>(what: string, f: () => Promise<T | undefined | null | false>) => untilShort(what, f, 120_000);
const LIFETIME = 30;

type Row = { name: string; stale: boolean; reported_serial: number | null };
const listed = async (ctx: Ctx) =>
  (JSON.parse((await ctx.pm.cli(['node', 'list', '--json'])).stdout) as Row[]).find((n) => n.name === 'n1')!;
const status = async (ctx: Ctx) =>
  (await ctx.pm.store.admin`select stale, reported_serial from inventory.node_status where name = 'n1'`)[0]!;
const newest = async (ctx: Ctx) =>
  (
    await ctx.pm.store
      .admin`select serial::int, extract(epoch from signed_at)::int as signed, extract(epoch from expires_at)::int as expires, envelope from assignment.declaration where node = 'n1' order by serial desc limit 1`
  )[0]!;

F.before(async (ctx) => {
  ctx.pm = await privateMesh();
  ctx.root = root();
  const set = await ctx.pm.cli(['freshness', '--lifetime', `${LIFETIME}s`, '--json']);
  assert.is(set.code, 0, set.stderr);
  assert.is(JSON.parse(set.stdout).lifetime, '00:00:30');
  ctx.serve = await ctx.pm.serve();
  ctx.host = (await ctx.pm.joined('n1', outageEnv(ctx.root))).proc;
  const f = join(ctx.pm.home, 'web.json');
  writeFileSync(
    f,
    JSON.stringify({
      name: 'web',
      resources: [
        { kind: 'file', path: join(ctx.root, 'web.conf'), content: b64(Buffer.from('listen 80\n')), mode: '0644' },
      ],
    }),
  );
  for (const args of [
    ['module', 'add', f],
    ['assign', 'web', 'n1'],
  ]) {
    const r = await ctx.pm.cli(args);
    assert.is(r.code, 0, r.stderr);
  }
  await until('n1 holds web.conf', async () => {
    try {
      return readFileSync(join(ctx.root, 'web.conf'), 'utf8') === 'listen 80\n';
    } catch {
      return false;
    }
  });
});

F.after((ctx) => stopFleet(ctx));

F('a lifetime outside 10 s to a year, or not a lifetime, is refused naming the form', async (ctx) => {
  const short = await ctx.pm.cli(['freshness', '--lifetime', '5s']);
  assert.is(short.code, 1);
  assert.match(short.stderr, /outside 10 seconds to 1 year.*\(MSH22\)/);
  const junk = await ctx.pm.cli(['freshness', '--lifetime', '1 week']);
  assert.is(junk.code, 1);
  assert.match(junk.stderr, /--lifetime "1 week" is not a duration: use a number and s, m, h or d.* \(MSH15\)/);
});

F(
  'every declaration carries when it was signed and until when it holds, the same in its body and its row',
  async (ctx) => {
    const d = await newest(ctx);
    const body = JSON.parse(JSON.parse(Buffer.from(d.envelope as Buffer).toString()).body) as {
      signed: number;
      expires: number;
    };
    assert.is(body.signed, d.signed);
    assert.is(body.expires, d.expires);
    assert.is(d.expires - d.signed, LIFETIME);
  },
);

F(
  'serve signs a current declaration again at half its life: a new serial, the same resources, nothing changed on the node',
  async (ctx) => {
    const before = await newest(ctx);
    const mark = ctx.host.output().length;
    await until('serve signed n1 again', async () => (await newest(ctx)).serial > before.serial);
    const after = await newest(ctx);
    // At half its life: not before, and well before the old one expired (a round runs every lifetime/8).
    assert.ok(
      after.signed >= before.signed + LIFETIME / 2 - 1,
      `signed again at ${after.signed - before.signed}s, not before half of ${LIFETIME}s`,
    );
    assert.ok(
      after.signed < before.expires - 2,
      `signed again at ${after.signed - before.signed}s of ${LIFETIME}s: too near the expiry`,
    );
    await ctx.host.waitFor(
      new RegExp(`applied declaration ${after.serial}: 0 changed, 0 removed, 0 restarted, 0 failed`),
      60_000,
      mark,
    );
    await ctx.serve.waitFor(/serve: signed again 1 declaration past half their lifetime \(n1 \d+\)/, 10_000);
    const row = await listed(ctx);
    assert.is(row.stale, false);
  },
);

F(
  'the link cut past the expiry: the host keeps applying, says stale; node_status and node list agree; signed again, it is cleared',
  async (ctx) => {
    const hmark = ctx.host.output().length;
    const smark = ctx.serve.output().length;
    await ctx.pm.rabbit.halt();
    try {
      // No broker: nothing the mesh signs can arrive, and what the node holds runs out.
      await ctx.host.waitFor(
        /declaration \d+ expired at .*: still applying it, but this node is stale: its feed may be frozen/,
        60_000,
        hmark,
      );
      await until('SQL says n1 is stale', async () => (await status(ctx)).stale === true);
      assert.is((await listed(ctx)).stale, true, 'mesh node list says what node_status says');
      assert.is(readFileSync(join(ctx.root, 'web.conf'), 'utf8'), 'listen 80\n', 'what it holds stays applied');
    } finally {
      await ctx.pm.rabbit.resume();
    }
    // Back: the host's stale report reaches serve, then the declaration signed meanwhile clears it.
    await ctx.serve.waitFor(/report: n1 is stale: declaration \d+ it holds expired at /, 90_000, smark);
    await until(
      'n1 is fresh again',
      async () => (await status(ctx)).stale === false && (await listed(ctx)).stale === false,
    );
    const row = await status(ctx);
    assert.ok(Number(row.reported_serial) > 0);
  },
);

F(
  'a change held by a rollout is not released by signing again: the held node gets what it holds, signed anew',
  async (ctx) => {
    const hold = await ctx.pm.cli(['rollout', 'hold']);
    assert.is(hold.code, 0, hold.stderr);
    const f = join(ctx.pm.home, 'web.json');
    writeFileSync(
      f,
      JSON.stringify({
        name: 'web',
        resources: [
          { kind: 'file', path: join(ctx.root, 'web.conf'), content: b64(Buffer.from('listen 8080\n')), mode: '0644' },
        ],
      }),
    );
    const add = await ctx.pm.cli(['module', 'add', f]);
    assert.is(add.code, 0, add.stderr);
    assert.match(add.stdout, /held by the rollout: n1/);
    const before = await newest(ctx);
    const mark = ctx.host.output().length;
    await until('serve signed n1 again', async () => (await newest(ctx)).serial > before.serial);
    const after = await newest(ctx);
    const resources = (e: unknown) => JSON.parse(JSON.parse(Buffer.from(e as Buffer).toString()).body).resources;
    assert.equal(resources(after.envelope), resources(before.envelope));
    await ctx.host.waitFor(new RegExp(`applied declaration ${after.serial}: 0 changed`), 60_000, mark);
    assert.is(readFileSync(join(ctx.root, 'web.conf'), 'utf8'), 'listen 80\n');
    const release = await ctx.pm.cli(['rollout', 'release']);
    assert.is(release.code, 0, release.stderr);
    await until(
      'n1 holds the released change',
      async () => readFileSync(join(ctx.root, 'web.conf'), 'utf8') === 'listen 8080\n',
    );
  },
);

F.run();
