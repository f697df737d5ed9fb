// Concurrency: parallel declares for one node keep serials unique and ordered
// (D2); parallel spends of one token give exactly one enrolment (E1).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import postgres from 'postgres';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';
import { declare } from '../../src/commands/declare.js';
import { tally, say, summary } from './tally.js';

const C = suite<{ mesh: Mesh; serve: Proc }>('concurrency');
C.before(async (ctx) => { ctx.mesh = await freshMesh(); ctx.serve = await ctx.mesh.serve(); });
C.after(async (ctx) => { await ctx.mesh.stop(); });

C('20 parallel declares for one node: 20 distinct serials, in order, the host ends on the newest', async ({ mesh }) => {
  const { proc } = await mesh.joined('web1', { MESH_HOST_RECONCILE_SECONDS: '3600' });
  Object.assign(process.env, mesh.env);
  const results = await Promise.all(Array.from({ length: 20 }, () => declare({ nodes: ['web1'] })));
  const serials = results.flat().map((d) => d.serial).sort((a, b) => a - b);
  assert.equal(serials, Array.from({ length: 20 }, (_, i) => i + 1));
  const rows = await mesh.store.admin`select serial from assignment.declaration where node = 'web1' order by serial`;
  assert.equal(rows.map((r) => Number(r.serial)), serials);
  await proc.waitFor(/applied declaration 20\b/, 30_000);
  const applied = [...proc.output().matchAll(/applied declaration (\d+)/g)].map((m) => Number(m[1]));
  assert.equal(applied, [...applied].sort((a, b) => a - b), 'the host only ever went forward');
  tally.tried += 20; tally.survived++;
  say('parallel declares', '20 at once: serials 1..20, unique, recorded in order; the host applied 20 last');
});

C('50 parallel spends of one token: exactly one enrolment', async ({ mesh }) => {
  const hash = createHash('sha256').update('s').digest();
  await mesh.store.admin`select inventory.issue_token('racer', ${hash}, null, null, interval '1 hour')`;
  const sql = postgres(mesh.store.url('inventory'), { max: 50, onnotice: () => {} });
  try {
    const out = await Promise.all(Array.from({ length: 50 }, (_, i) =>
      sql`select inventory.spend_token(${hash}::bytea, 'racer', ${Buffer.alloc(32, i + 1)}::bytea, ${Buffer.alloc(32, 9)}::bytea, ${Buffer.alloc(32, 9)}::bytea) as o`.then((r) => r[0]!.o)));
    assert.is(out.filter((o) => o === 'enrolled').length, 1);
  } finally { await sql.end(); }
  tally.tried += 50; tally.refused += 49;
  say('parallel spends', '50 at once: 1 enrolled, 49 refused');
});

C('10 parallel rotations of one credential: 10 generations, and every holder ends on the same one (S5)', async ({ mesh }) => {
  const a = mesh.store.admin;
  const key = (n: number) => Buffer.alloc(32, n);
  await a`insert into inventory.node (name, identity_key, overlay_key, sealing_key, enrolled_at) values
    ('db1', ${key(1)}, ${key(2)}, ${key(3)}, now()), ('app1', ${key(4)}, ${key(5)}, ${key(6)}, now())`;
  const sql = postgres(mesh.store.url('secret'), { max: 10, onnotice: () => {} });
  try {
    const gens = await Promise.all(Array.from({ length: 10 }, (_, i) =>
      sql`select secret.put_made(secret_name => 'appdb/app', holders => ${['db1', 'app1']}::text[],
            sealed_to => ${[key(3).toString('hex'), key(6).toString('hex')]}::text[], blobs => ${[`p${i}`, `c${i}`]}::text[]) as g`.then((r) => Number(r[0]!.g))));
    assert.equal([...gens].sort((x, y) => x - y), Array.from({ length: 10 }, (_, i) => i + 1), 'each rotation its own generation');
    const rows = await a`select holder, generation, blob from secret.sealed where secret = 'appdb/app' order by holder`;
    assert.is(rows.length, 2, 'one blob per holder, never two generations side by side');
    assert.is(Number(rows[0]!.generation), 10);
    assert.is(Number(rows[1]!.generation), 10);
    // Both ends hold the blobs of the same rotation: never one end's old and the other's new.
    assert.is(String(rows[0]!.blob).slice(1), String(rows[1]!.blob).slice(1));
  } finally { await sql.end(); }
  tally.tried += 10; tally.survived++;
  say('parallel rotations', '10 at once on one pair: generations 1..10, both holders end on the same rotation');
});

C.after(() => summary('concurrency'));
C.run();
