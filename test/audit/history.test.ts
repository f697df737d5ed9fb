// The audit history and drift end to end (C3): a real mesh serve and
// mesh-host. What the operator and the host do lands in `mesh log` with who
// and when; a file a "cron job" keeps editing is flagged by `mesh drift` once
// it was put back more than N times in the hour; a row a superuser edits
// behind the database's triggers is named by `mesh audit verify`.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { writeFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { addModule, cli, b64, root, until, inject } from '../declare/helpers.js';
import { envelope } from '../../src/assignment/declare.js';
import { signingPair } from '../../src/crypto/keys.js';

interface Ctx {
  mesh: Mesh;
  serve: Proc;
  proc: Proc;
  root: string;
}
const H = suite<Ctx>('the audit history and drift, end to end');

const conf = (ctx: Ctx) => join(ctx.root, 'web.conf');
interface LogRow {
  seq: number;
  kind: string;
  node: string | null;
  actor: string;
  role: string;
  detail: Record<string, unknown>;
  what: string;
}
const log = async (ctx: Ctx, ...args: string[]): Promise<LogRow[]> =>
  JSON.parse(await cli(ctx.mesh, 'log', '--json', ...args));

H.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
  ctx.root = root();
  const j = await ctx.mesh.joined('web1', { MESH_HOST_ROOTS: ctx.root, MESH_HOST_RECONCILE_SECONDS: '1' });
  ctx.proc = j.proc;
  await addModule(ctx.mesh, 'web', [{ kind: 'file', path: conf(ctx), content: b64('v1'), mode: '0644' }]);
  await cli(ctx.mesh, 'assign', 'web', 'web1');
  await ctx.proc.waitFor(/applied declaration 2\b/, 30_000);
});
H.after(async (ctx) => {
  await ctx.mesh.stop();
  rmSync(ctx.root, { recursive: true, force: true });
});

H('a token issued and spent, the enrolment and each declaration are rows of their kind, with who', async (ctx) => {
  const rows = await log(ctx, '--node', 'web1');
  assert.equal(
    rows.map((r) => r.kind),
    ['token-issued', 'token-spent', 'enrolled', 'declared', 'declared'],
  );
  const [issued, spent, enrolled, first, second] = rows;
  // Who is the database role of the session, not a name the client chose.
  assert.is(issued!.actor, 'mesh_inventory', 'the token is issued through inventory');
  assert.is(spent!.actor, 'mesh_inventory', 'the enrolment is answered by serve, as inventory');
  assert.is(spent!.role, 'mesh_inventory');
  assert.is(spent!.detail.token, issued!.detail.token, 'the token spent is the one issued');
  const [keys] = await ctx.mesh.store
    .admin`select encode(identity_key, 'hex') as identity from inventory.node where name = 'web1'`;
  assert.is(enrolled!.detail.identity_key, keys!.identity);
  assert.is(second!.actor, 'mesh_assignment', 'the assignment owed serial 2');
  const decl = await ctx.mesh.store
    .admin`select serial::int, encode(digest, 'hex') as digest from assignment.declaration where node = 'web1' order by serial`;
  assert.equal(
    [first!.detail, second!.detail],
    decl.map((d) => ({ serial: d.serial, digest: d.digest })),
  );
  assert.match(second!.what, /^digest=[0-9a-f]{64} serial=2$/);
  assert.equal(
    (await log(ctx, '--kind', 'token')).map((r) => r.kind),
    ['token-issued', 'token-spent'],
    'a family by its prefix',
  );
  assert.equal(
    (await log(ctx, '--kind', 'declared', '--limit', '1')).map((r) => r.detail.serial),
    [2],
    'the newest LIMIT',
  );
  assert.is((await log(ctx, '--since', '1h')).length, 5);
  const human = await cli(ctx.mesh, 'log', '--node', 'web1');
  assert.match(human, /^SEQ\s+AT\s+KIND\s+NODE\s+ACTOR\s+WHAT/);
  assert.match(human, /token-issued\s+web1\s+mesh_inventory/);
});

H('a refusal the host reported is a row with its fault and reason', async (ctx) => {
  const smark = ctx.serve.output().length;
  const body = JSON.stringify({ mesh: ctx.mesh.signer.mesh, node: 'web1', serial: 99, resources: [] });
  await inject(ctx.mesh, 'web1', envelope(body, { ...ctx.mesh.signer, secret: signingPair().secret }));
  await ctx.serve.waitFor(/web1 refused a declaration.*: forged/, 10_000, smark);
  const [r] = await log(ctx, '--kind', 'refused');
  assert.is(r!.node, 'web1');
  assert.is(r!.kind, 'refused-forged');
  assert.is(r!.detail.fault, 'forged');
  assert.is((await log(ctx, '--kind', 'refused-replayed')).length, 0, 'a forgery is not filed as a replay');
  assert.match(r!.detail.reason as string, /declaration is not signed by the key/);
});

/** Edit the file as a cron job would and wait until the host put it back and serve counted it. */
async function drift(ctx: Ctx, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const smark = ctx.serve.output().length;
    writeFileSync(conf(ctx), `edited by cron ${i}`);
    await until('file put back', async () => readFileSync(conf(ctx), 'utf8') === 'v1');
    await ctx.serve.waitFor(new RegExp(`report: web1 put back file:${conf(ctx)}`), 10_000, smark);
  }
}

H('a file put back N times in the hour is drift; N + 1 times is fighting (mesh drift)', async (ctx) => {
  const row = async () =>
    (
      JSON.parse(await cli(ctx.mesh, 'drift', '--json')) as {
        node: string;
        resource: string;
        last_hour: number;
        fighting: boolean;
      }[]
    ).find((r) => r.node === 'web1' && r.resource === `file:${conf(ctx)}`);
  await drift(ctx, 3);
  assert.equal(
    { ...(await row()), last_at: undefined, times: undefined },
    {
      node: 'web1',
      resource: `file:${conf(ctx)}`,
      last_hour: 3,
      fighting: false,
      fighting_after: 3,
      last_at: undefined,
      times: undefined,
    },
  );
  const rowsOf = async () => (await cli(ctx.mesh, 'drift')).split('\n').slice(1).join('\n');
  assert.not.match(await rowsOf(), /FIGHTING/);
  await drift(ctx, 1);
  assert.is((await row())!.last_hour, 4);
  assert.is((await row())!.fighting, true);
  assert.match(await rowsOf(), new RegExp(`web1\\s+file:${conf(ctx)}\\s+4\\s+4\\s+\\S+\\s+FIGHTING`));
});

H(
  'mesh audit head and verify --head: a chain a superuser rewrote whole verifies alone and is found against the kept head (MSH76); a trigger taken away is named (MSH75)',
  async (ctx) => {
    const file = join(ctx.root, 'kept-head.json');
    const taken = await ctx.mesh.cli(['audit', 'head', '--out', file]);
    assert.is(taken.code, 0, taken.stderr);
    const kept = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(JSON.parse(taken.stdout), kept, 'printed as written');
    assert.match(kept.hash, /^[0-9a-f]{64}$/);
    const ok = await ctx.mesh.cli(['audit', 'verify', '--head', file]);
    assert.is(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, new RegExp(`it still reaches the kept head \\(row ${kept.seq}\\)`));
    // A whole-chain rewrite, as only a superuser can: row 1 edited and every hash after it made again.
    const rewrite = async (sql: typeof ctx.mesh.store.admin) => {
      await sql`update audit.event set node = 'elsewhere' where seq = 1`;
      await sql`do $$ declare e audit.event; prev bytea := decode(repeat('00', 32), 'hex');
        begin
          for e in select * from audit.event order by seq loop
            update audit.event set prev_hash = prev, hash = audit.link(prev, e) where seq = e.seq returning hash into prev;
          end loop;
        end $$`;
    };
    const admin = ctx.mesh.store.admin;
    const saved = await admin`select seq, node, prev_hash, hash from audit.event order by seq`;
    await admin.begin(async (sql) => {
      await sql`set local session_replication_role = replica`;
      await rewrite(sql as unknown as typeof admin);
    });
    try {
      const alone = await ctx.mesh.cli(['audit', 'verify']);
      assert.is(alone.code, 0, 'rewritten whole, the chain alone is whole: ' + alone.stderr);
      const found = await ctx.mesh.cli(['audit', 'verify', '--head', file]);
      assert.is(found.code, 1);
      assert.match(found.stderr, /no longer reaches the kept head: row \d+ has hash [0-9a-f]{64}.*\(MSH76\)/);
    } finally {
      await admin.begin(async (sql) => {
        await sql`set local session_replication_role = replica`;
        for (const r of saved)
          await sql`update audit.event set node = ${r.node}, prev_hash = ${r.prev_hash}, hash = ${r.hash} where seq = ${r.seq}`;
      });
    }
    const notHead = await ctx.mesh.cli(['audit', 'verify', '--head', conf(ctx)]);
    assert.is(notHead.code, 1);
    assert.match(notHead.stderr, /is not a kept audit head \(Unexpected token.*\(MSH77\)/, 'says why it is not JSON');
    const gone = await ctx.mesh.cli(['audit', 'verify', '--head', join(ctx.root, 'no-such-head.json')]);
    assert.is(gone.code, 1);
    assert.match(gone.stderr, /is not a kept audit head \(ENOENT.*\(MSH77\)/, 'says the file is not there');
    // JSON that is no head is refused, never read as "no head given" (which would check nothing).
    const partial = join(ctx.root, 'partial-head.json');
    writeFileSync(partial, JSON.stringify({ seq: 3, hash: 'not hex' }));
    const half = await ctx.mesh.cli(['audit', 'verify', '--head', partial]);
    assert.is(half.code, 1, half.stdout);
    assert.match(half.stderr, /is not a kept audit head: it needs a seq .*\(MSH77\)/);
    // A trigger only a superuser could take away (the guard stops every other role) is named by verify.
    await admin.begin(async (sql) => {
      await sql`set local session_replication_role = replica`;
      await sql`alter table inventory.token disable trigger audit_token_spent`;
    });
    try {
      const off = await ctx.mesh.cli(['audit', 'verify', '--json']);
      assert.is(off.code, 1);
      assert.match(off.stdout + off.stderr, /audit_token_spent on inventory.token is not in force: it is disabled/);
      assert.match(off.stdout + off.stderr, /MSH75/);
    } finally {
      await admin.begin(async (sql) => {
        await sql`set local session_replication_role = replica`;
        await sql`alter table inventory.token enable trigger audit_token_spent`;
      });
    }
    assert.is((await ctx.mesh.cli(['audit', 'verify', '--head', file])).code, 0, 'put back, all is whole');
  },
);

H(
  'mesh audit verify: whole says so; a row a superuser edited behind the triggers is named, with MSH71 and a non-zero exit',
  async (ctx) => {
    const ok = await ctx.mesh.cli(['audit', 'verify', '--json']);
    assert.is(ok.code, 0, ok.stderr);
    const whole = JSON.parse(ok.stdout);
    assert.is(whole.intact, true);
    assert.match(whole.head, /^[0-9a-f]{64}$/);
    assert.match(
      await cli(ctx.mesh, 'audit', 'verify'),
      new RegExp(`^the audit history is whole: ${whole.rows} rows, head ${whole.head}`),
    );
    const [target] = await ctx.mesh.store
      .admin`select seq::int from audit.event where kind = 'declared' and detail->>'serial' = '1'`;
    await ctx.mesh.store.admin.begin(async (sql) => {
      await sql`set local session_replication_role = replica`;
      await sql`update audit.event set detail = jsonb_set(detail, '{digest}', to_jsonb(repeat('0', 64))) where seq = ${target!.seq}`;
    });
    const broken = await ctx.mesh.cli(['audit', 'verify']);
    assert.is(broken.code, 1);
    assert.match(
      broken.stderr,
      new RegExp(
        `^mesh: the audit history does not match from row ${target!.seq} \\(declared, node web1, at [^)]+\\): its hash does not match its contents: the row was changed after it was written: .* \\(MSH71\\)\\.\\n$`,
      ),
    );
  },
);

H('mesh log refuses what it cannot read, naming the remedy', async (ctx) => {
  const kind = await ctx.mesh.cli(['log', '--kind', 'nonsense']);
  assert.is(kind.code, 1);
  assert.match(
    kind.stderr,
    /--kind "nonsense" is not a kind of the history: use one of broker-added, broker-changed, broker-removed, declared, enrolled, freeze, refused, refused-forged, refused-malformed, refused-replayed, refused-stale, retired, rollout, rotated, secret-created, token-issued, token-spent.* \(MSH72\)\.\n$/,
  );
  const since = await ctx.mesh.cli(['log', '--since', 'yesterday']);
  assert.match(since.stderr, /--since "yesterday" is not a duration: use a number and s, m, h or d.* \(MSH15\)\.\n$/);
  const limit = await ctx.mesh.cli(['log', '--limit', '0']);
  assert.match(limit.stderr, /--limit 0 is not a number of rows: give a whole number above 0 \(MSH73\)\.\n$/);
});

H.run();
