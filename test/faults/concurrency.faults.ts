// Concurrency: parallel declares for one node keep serials unique and ordered
// (D2), and a newer serial never carries an older truth; parallel spends of one
// token give exactly one enrolment (E1).
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import postgres from 'postgres';
import { freshMesh, spawnProc, MESH, type Mesh, type Proc } from '../harness/mesh.js';
import { declare } from '../../src/assignment/declare.js';
import { tally, say, summary } from './tally.js';
import { cli, until } from '../declare/helpers.js';

const C = suite<{ mesh: Mesh; serve: Proc }>('concurrency');
C.before(async (ctx) => {
  ctx.mesh = await freshMesh();
  ctx.serve = await ctx.mesh.serve();
});
C.after(async (ctx) => {
  await ctx.serve?.stop();
  await ctx.mesh.stop();
});

C('20 parallel declares for one node: 20 distinct serials, in order, the host ends on the newest', async ({ mesh }) => {
  const { proc } = await mesh.joined('web1', { MESH_HOST_RECONCILE_SECONDS: '3600' });
  // Serial 1 is owed at enrolment (the node's firewall): the 20 come after it.
  await proc.waitFor(/applied declaration 1\b/, 30_000);
  Object.assign(process.env, mesh.env);
  const results = await Promise.all(Array.from({ length: 20 }, () => declare({ nodes: ['web1'] })));
  const serials = results
    .flat()
    .map((d) => d.serial)
    .sort((a, b) => a - b);
  assert.equal(
    serials,
    Array.from({ length: 20 }, (_, i) => i + 2),
  );
  const rows = await mesh.store.admin`select serial from assignment.declaration where node = 'web1' order by serial`;
  assert.equal(
    rows.map((r) => Number(r.serial)),
    [1, ...serials],
  );
  await proc.waitFor(/applied declaration 21\b/, 30_000);
  const applied = [...proc.output().matchAll(/applied declaration (\d+)/g)].map((m) => Number(m[1]));
  assert.equal(
    applied,
    [...applied].sort((a, b) => a - b),
    'the host only ever went forward',
  );
  tally.tried += 20;
  tally.survived++;
  say(
    'parallel declares',
    "20 at once: serials 2..21 after the enrolment's 1, unique, recorded in order; the host applied 21 last",
  );
});

C(
  'a declare waiting for its turn composes what was committed while it waited: the newer serial carries the newer truth',
  async ({ mesh }) => {
    Object.assign(process.env, mesh.env);
    // Hold the turn as a long declare would, then start another and change the truth under it.
    const other = await mesh.store.admin.reserve();
    try {
      await other`begin`;
      await other`select assignment.take_declare_turn()`;
      const waiting = declare({ nodes: ['web1'] });
      await until(
        'the declare waits for its turn',
        async () =>
          (await mesh.store.admin`select 1 from pg_locks where locktype = 'advisory' and not granted`).length > 0,
      );
      // Through the contexts' own functions, not the CLI: the CLI's commands re-declare (W2) and would queue behind the held turn too.
      await mesh.store
        .admin`select * from catalogue.put_module(module_name => 'late', module_resources => ${mesh.store.admin.json([{ id: 'file:/etc/mesh-late', kind: 'file', path: '/etc/mesh-late', content: 'bGF0ZQo=', mode: '0644' }] as never)}::jsonb, module_origin => 'handed')`;
      await mesh.store.admin`select assignment.assign('late', 'web1')`;
      await other`commit`;
      const [sent] = await waiting;
      const [row] = await mesh.store
        .admin`select convert_from(envelope, 'utf8') as env from assignment.declaration where node = 'web1' and serial = ${sent!.serial}`;
      const ids = (JSON.parse(JSON.parse(row!.env).body).resources as { id: string }[]).map((r) => r.id);
      assert.ok(
        ids.includes('file:/etc/mesh-late'),
        `declaration ${sent!.serial} was composed after its turn began, so it carries the module assigned while it waited (has: ${ids.join(', ')})`,
      );
    } finally {
      await other`rollback`.catch(() => {});
      other.release();
    }
    await cli(mesh, 'unassign', 'late', 'web1');
    tally.tried++;
    tally.survived++;
    say('declare turns', 'a declare queued behind another composed the truth committed while it waited');
  },
);

C('a serve starting beside owed nodes consumes while its re-declare waits for the declare turn (W2)', async (ctx) => {
  const { mesh } = ctx;
  await ctx.serve.stop();
  // A change with no declare after it, as a command killed between the two leaves it: web1 is owed.
  await mesh.store
    .admin`select * from catalogue.put_module(module_name => 'owed', module_resources => ${mesh.store.admin.json([{ id: 'file:/etc/mesh-owed', kind: 'file', path: '/etc/mesh-owed', content: 'b3dlZAo=', mode: '0644' }] as never)}::jsonb, module_origin => 'handed')`;
  await mesh.store.admin`select assignment.assign('owed', 'web1')`;
  const before = await mesh.store.admin`select max(serial)::int as s from assignment.declaration where node = 'web1'`;
  const other = await mesh.store.admin.reserve();
  try {
    await other`begin`;
    await other`select assignment.take_declare_turn()`;
    // Consuming mesh.control while the re-declare cannot take its turn (mesh.serve() would wait for the re-declare too).
    ctx.serve = spawnProc(process.execPath, [MESH, 'serve'], mesh.env);
    await ctx.serve.waitFor(/consuming mesh\.control/);
    const [still] = await mesh.store
      .admin`select max(serial)::int as s from assignment.declaration where node = 'web1'`;
    assert.is(still!.s, before[0]!.s, 'web1 is not declared while the turn is held');
    await other`commit`;
  } finally {
    await other`rollback`.catch(() => {});
    other.release();
  }
  await ctx.serve.waitFor(/serve: re-declaring web1 \d+ \(since their last declaration\)/, 30_000);
  tally.tried++;
  tally.survived++;
  say('serve start', 'consumed while its re-declare of the owed waited for the turn, then re-declared them');
});

C('50 parallel spends of one token: exactly one enrolment', async ({ mesh }) => {
  const hash = createHash('sha256').update('s').digest();
  await mesh.store.admin`select inventory.issue_token('racer', ${hash}, null, null, interval '1 hour')`;
  const sql = postgres(mesh.store.url('inventory'), { max: 50, onnotice: () => {} });
  try {
    const out = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        sql`select inventory.spend_token(${hash}::bytea, 'racer', ${Buffer.alloc(32, i + 1)}::bytea, ${Buffer.alloc(32, 9)}::bytea, ${Buffer.alloc(32, 9)}::bytea) as o`.then(
          (r) => r[0]!.o,
        ),
      ),
    );
    assert.is(out.filter((o) => o === 'enrolled').length, 1);
  } finally {
    await sql.end();
  }
  tally.tried += 50;
  tally.refused += 49;
  say('parallel spends', '50 at once: 1 enrolled, 49 refused');
});

C(
  '10 parallel rotations of one credential: 10 generations, and every holder ends on the same one (S5)',
  async ({ mesh }) => {
    const a = mesh.store.admin;
    const key = (n: number) => Buffer.alloc(32, n);
    await a`insert into inventory.node (name, identity_key, overlay_key, sealing_key, enrolled_at) values
    ('db1', ${key(1)}, ${key(2)}, ${key(3)}, now()), ('app1', ${key(4)}, ${key(5)}, ${key(6)}, now())`;
    const sql = postgres(mesh.store.url('secret'), { max: 10, onnotice: () => {} });
    try {
      const gens = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          sql`select secret.put_made(secret_name => 'appdb/app', holders => ${['db1', 'app1']}::text[],
            sealed_to => ${[key(3).toString('hex'), key(6).toString('hex')]}::text[], blobs => ${[`p${i}`, `c${i}`]}::text[]) as g`.then(
            (r) => Number(r[0]!.g),
          ),
        ),
      );
      assert.equal(
        [...gens].sort((x, y) => x - y),
        Array.from({ length: 10 }, (_, i) => i + 1),
        'each rotation its own generation',
      );
      const rows =
        await a`select holder, generation, blob from secret.sealed where secret = 'appdb/app' order by holder`;
      assert.is(rows.length, 2, 'one blob per holder, never two generations side by side');
      assert.is(Number(rows[0]!.generation), 10);
      assert.is(Number(rows[1]!.generation), 10);
      // Both ends hold the blobs of the same rotation: never one end's old and the other's new.
      assert.is(String(rows[0]!.blob).slice(1), String(rows[1]!.blob).slice(1));
    } finally {
      await sql.end();
    }
    tally.tried += 10;
    tally.survived++;
    say('parallel rotations', '10 at once on one pair: generations 1..10, both holders end on the same rotation');
  },
);

C.after(() => summary('concurrency'));
C.run();
