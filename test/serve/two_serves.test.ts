// Several serves: two `mesh serve` on one store and one broker,
// competing for mesh.control and draining one outbox; one is SIGKILLed in the
// middle of an enrolment burst, then a declare --all. Afterwards every
// enrolment succeeded (or was refused with a sentence and succeeded when tried
// again), no token was spent twice, and every node reports its newest declaration.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { freshMesh, type Mesh, type Proc } from '../harness/mesh.js';

const S = suite<{ mesh: Mesh }>('two serves, one killed mid-burst');
S.before(async (ctx) => {
  ctx.mesh = await freshMesh();
});
S.after(async (ctx) => {
  await ctx.mesh.stop();
});

async function waitUntil(what: string, ok: () => Promise<boolean>, tries = 900): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await ok()) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`never happened: ${what}`);
}

S('an enrolment burst and a declare --all survive a serve SIGKILLed midway; no token spent twice', async ({ mesh }) => {
  const one = await mesh.serve();
  const two = await mesh.serve();
  const names = Array.from({ length: 12 }, (_, i) => `n${i}`);
  // Issued one after another: twelve CLIs at once against the management API is a load test of its own.
  const tokens: string[] = [];
  for (const n of names) tokens.push(await mesh.token(n));
  const procs: Proc[] = [];
  const enrolled = names.map(async (n, i) => {
    const h = mesh.host(n);
    // A refusal is a sentence; tried again with the same token it succeeds (the spend answers 'again').
    for (let attempt = 0; ; attempt++) {
      const r = await h.enrol(tokens[i]!);
      if (r.code === 0) break;
      assert.ok(r.stderr.trim().length > 0, `a refused enrolment says why (${n})`);
      if (attempt > 5) throw new Error(`${n} never enrolled: ${r.stderr}`);
    }
    const p = h.run();
    procs.push(p);
    await p.waitFor(/connected to /, 60_000);
  });
  // Midway: once some have enrolled, one serve dies without a word.
  await waitUntil(
    'a third enrolled',
    async () =>
      (await mesh.store.admin`select count(*)::int as n from inventory.node where enrolled_at is not null`)[0]!.n >= 4,
  );
  await one.stop('SIGKILL');
  await Promise.all(enrolled);
  const d = await mesh.cli(['declare', '--all', '--json']);
  assert.is(d.code, 0, d.stderr);
  await waitUntil('every node reports its newest declaration', async () => {
    const rows = await mesh.store
      .admin`select n.name from inventory.node n left join inventory.report r on r.node = n.name
      where n.name like 'n%' and (r.serial is null or r.serial < (select max(serial) from assignment.declaration d where d.node = n.name))`;
    return rows.length === 0;
  });
  const spent = await mesh.store
    .admin`select node, count(*)::int as n from inventory.token where spent_at is not null and node like 'n%' group by node`;
  assert.is(spent.length, names.length, 'every token spent');
  for (const s of spent) assert.is(s.n, 1, `${s.node}'s token spent once`);
  assert.is(two.child.exitCode, null, 'the other serve carried on');
});

S.run();
