// S1: the mesh discards every plaintext. After a grant, a rotation, a made
// and an accepted secret have reached real hosts, the whole database (pg_dump,
// schema and rows) holds none of the values the hosts read from their files:
// not raw, not hex, not base64.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, existsSync, writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { freshMesh, type Mesh } from '../../harness/mesh.js';
import { cli, root, until } from '../../declare/helpers.js';
import { pgDump } from '../../store/dump.js';

interface Ctx {
  mesh: Mesh;
  root: string;
}
const P = suite<Ctx>('S1: no plaintext in the store');
const WAIT = 120_000; // hosts apply on a machine other suites share: wait on files, never judge time

P.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.root = root();
  await ctx.mesh.serve();
  const env = { MESH_HOST_ROOTS: ctx.root, MESH_HOST_RECONCILE_SECONDS: '3600' };
  await Promise.all(['db1', 'web1'].map((n) => ctx.mesh.joined(n, env)));
  for (const m of ['pg', 'app']) {
    writeFileSync(join(ctx.mesh.home, `${m}.json`), JSON.stringify({ name: m, resources: [] }));
    await cli(ctx.mesh, 'module', 'add', join(ctx.mesh.home, `${m}.json`));
  }
  await cli(ctx.mesh, 'assign', 'pg', 'db1');
  await cli(ctx.mesh, 'assign', 'app', 'web1');
  await cli(ctx.mesh, 'provision', 'root', ctx.root);
  await cli(
    ctx.mesh,
    'provision',
    'offer',
    'appdb',
    '--kind',
    'postgres',
    '--provider',
    'pg',
    '--host',
    '127.0.0.1',
    '--port',
    '5432',
  );
});
P.after(async (ctx) => {
  await ctx.mesh?.stop();
  if (ctx.root) rmSync(ctx.root, { recursive: true, force: true });
});

const read = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : undefined);

/** Every form a value could be kept in: as it is, hex, base64 (padded or not), base64url, and its sha256 (a short password is guessed from it). */
function forms(value: string): string[] {
  const b = Buffer.from(value, 'utf8');
  const b64 = b.toString('base64');
  return [
    value,
    b.toString('hex'),
    b.toString('hex').toUpperCase(),
    b64,
    b64.replace(/=+$/, ''),
    b.toString('base64url'),
    createHash('sha256').update(b).digest('hex'),
  ];
}

/** The dump and what is nested in it: every bytea decoded (a declaration's envelope is one), and every base64 run in those decoded once more. */
function unwrapped(dump: string): string {
  const bytea = [...dump.matchAll(/\\x([0-9a-f]+)/g)]
    .map((m) => Buffer.from(m[1]!, 'hex').toString('latin1'))
    .join('\n');
  const inner = [...(dump + bytea).matchAll(/[A-Za-z0-9+/_-]{16,}={0,2}/g)]
    .map((m) => Buffer.from(m[0], 'base64').toString('latin1'))
    .join('\n');
  return [dump, bytea, inner].join('\n');
}

/** Dump the whole database and look for every value in every form; first prove the search finds what is there. */
async function storeHolds(ctx: Ctx, values: Record<string, string>, sealed: string[]): Promise<void> {
  const dump = unwrapped(await pgDump(ctx.mesh.store.db));
  const [k] = await ctx.mesh.store
    .admin`select encode(sealing_key, 'hex') as hex from inventory.node where name = 'web1'`;
  assert.ok(dump.includes(k!.hex as string), 'a bytea the store keeps is found in hex');
  const [d] = await ctx.mesh.store
    .admin`select convert_from(envelope, 'utf8') as e from assignment.declaration where node = 'web1' order by serial desc limit 1`;
  assert.ok(dump.includes(d!.e as string), "a declaration's envelope is read out of its bytea");
  for (const s of sealed) {
    const [b] = await ctx.mesh.store.admin`select blob from secret.sealed where secret = ${s} limit 1`;
    assert.ok(b && dump.includes(b.blob as string), `the sealed copy of ${s} is in the dump`);
  }
  for (const [what, value] of Object.entries(values)) {
    assert.ok(value.length >= 16, `${what}: a real value (${value.length} characters)`);
    for (const f of forms(value))
      assert.not.ok(
        dump.includes(f),
        `the ${what} plaintext is in the store (as ${JSON.stringify(f.slice(0, 12))}...)`,
      );
  }
}

P(
  'after grant, rotation, make and accept, pg_dump of the whole database holds no plaintext in any form',
  async (ctx) => {
    const uses = join(ctx.root, 'uses', 'app', 'appdb.secret');
    const provides = join(ctx.root, 'provides', 'appdb', 'app.secret');
    await cli(ctx.mesh, 'provision', 'grant', 'appdb', 'app', '--database', 'app', '--user', 'app_user');
    const granted = await until(
      'the granted credential on both ends',
      async () => {
        const v = read(uses);
        return v && v === read(provides) ? v : undefined;
      },
      WAIT,
    );
    await storeHolds(ctx, { granted }, ['provision/appdb/app']);
    await cli(ctx.mesh, 'secret', 'rotate', 'appdb', 'app');
    const rotated = await until(
      'the rotated credential on both ends',
      async () => {
        const v = read(uses);
        return v && v !== granted && v === read(provides) ? v : undefined;
      },
      WAIT,
    );
    const madePath = join(ctx.root, 'web1', 'made.key');
    await cli(ctx.mesh, 'secret', 'make', 'web1-key', '--node', 'web1', '--path', madePath);
    const made = await until('the made secret on web1', async () => read(madePath), WAIT);
    const told = 'told-to-another-system-' + Date.now().toString(36);
    const from = join(ctx.mesh.home, 'told');
    writeFileSync(from, told, { mode: 0o600 });
    const acceptedPath = join(ctx.root, 'db1', 'told');
    await cli(ctx.mesh, 'secret', 'accept', 'db1-told', '--node', 'db1', '--path', acceptedPath, '--from', from);
    assert.is(await until('the accepted secret on db1', async () => read(acceptedPath), WAIT), told);
    await storeHolds(ctx, { granted, rotated, made, accepted: told }, ['provision/appdb/app', 'web1-key', 'db1-told']);
  },
);

P.run();
