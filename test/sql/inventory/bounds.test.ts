// P2 in SQL: what one node can make the store answer or keep is bounded per
// node: a recover or rekey answered once per interval, a message set aside
// kept as the node's newest few, corrections pruned past the drift window,
// refusals folded by kind before they reach the history, each chunk of an
// agent package handed to a node once per interval.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, enrol, refusedWith, type SqlCtx } from '../helpers.js';

const B = suite<SqlCtx>('per-node bounds, as mesh_inventory (P2)');
B.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  await enrol(ctx.as, 'hog');
  await enrol(ctx.as, 'calm');
});
B.after(async (ctx) => {
  await closeRoles(ctx);
});

B(
  'the same recover or rekey answer is given once per node per interval: asked again sooner is refused (MSHS3)',
  async (ctx) => {
    const sql = ctx.as.inventory;
    await sql`select inventory.set_answer_every(interval '1 hour')`;
    await sql`select inventory.check_answer('hog', 'recover', 'a')`;
    await sql`select inventory.mark_answered('hog', 'recover', 'a')`;
    const e = await refusedWith(sql`select inventory.check_answer('hog', 'recover', 'a')`, 'MSHS3');
    assert.match(e.message, /hog asked for a recover again/);
    // Something new to answer (a newer declaration since) is answered at once.
    await sql`select inventory.check_answer('hog', 'recover', 'b')`;
    // Each kind and each node on its own.
    await sql`select inventory.check_answer('hog', 'rekey', 'a')`;
    await sql`select inventory.check_answer('calm', 'recover', 'a')`;
    // Checking is not answering: a check whose answer never went out leaves the next one free.
    await sql`select inventory.check_answer('calm', 'recover', 'a')`;
    await sql`select inventory.set_answer_every(interval '0')`;
    await sql`select inventory.check_answer('hog', 'recover', 'a')`;
  },
);

B(
  'an answer to a node retired meanwhile is not kept, and is no error: the handler that gave it goes on',
  async (ctx) => {
    const sql = ctx.as.inventory;
    await sql`select inventory.mark_answered('gone', 'recover', 'a')`;
    const [n] = await sql`select count(*)::int as n from inventory.answered where node = 'gone'`;
    assert.is(n!.n, 0);
  },
);

B('a message set aside is kept with why; a node keeps only its newest few', async (ctx) => {
  const sql = ctx.as.inventory;
  const kept = Number((await sql`select letters_kept from inventory.bounds_setting`)[0]!.letters_kept);
  for (let i = 0; i < kept + 5; i++)
    await sql`select inventory.set_aside('hog', 'report', ${`m${i}`}::text, 'index row size exceeds maximum', 5, ${Buffer.from(`{"n":${i}}`)})`;
  await sql`select inventory.set_aside('calm', 'recover', null, 'a store fault', 5, ${Buffer.from('{}')})`;
  const hog =
    await sql`select message_id, reason, tries, bytes from inventory.dead_letters where node = 'hog' order by id`;
  assert.is(hog.length, kept, 'the newest few');
  assert.is(hog[0]!.message_id, 'm5', 'the oldest went first');
  assert.equal(
    { reason: hog[0]!.reason, tries: hog[0]!.tries, bytes: hog[0]!.bytes },
    { reason: 'index row size exceeds maximum', tries: 5, bytes: 7 },
  );
  assert.is((await sql`select count(*)::int as n from inventory.dead_letters where node = 'calm'`)[0]!.n, 1);
});

B('corrections past the drift window are pruned when the node next reports one', async (ctx) => {
  const sql = ctx.as.inventory;
  await sql`select inventory.record_corrections('hog', ${['file:/etc/a', 'file:/etc/b']}::text[])`;
  await ctx.store.admin`update inventory.correction set corrected_at = now() - interval '2 days' where node = 'hog'`;
  await sql`select inventory.record_corrections('calm', ${['file:/etc/a']}::text[])`;
  await ctx.store.admin`update inventory.correction set corrected_at = now() - interval '2 days' where node = 'calm'`;
  await sql`select inventory.record_corrections('hog', ${['file:/etc/a']}::text[])`;
  const hog = await sql`select resource from inventory.correction where node = 'hog'`;
  assert.equal(
    hog.map((r) => r.resource),
    ['file:/etc/a'],
    'only the one within the window',
  );
  assert.is(
    (await sql`select count(*)::int as n from inventory.correction where node = 'calm'`)[0]!.n,
    1,
    "another node's are pruned when it reports",
  );
});

B(
  'refusals of one kind are folded within the window whatever the reason: the history keeps one a kind',
  async (ctx) => {
    const sql = ctx.as.inventory;
    const refuse = async (fault: string, reason: string) =>
      (
        await sql`select inventory.record_refusal(node_name => 'hog', refused_serial => null, refusal_fault => ${fault}::text, refusal_reason => ${reason}::text) as n`
      )[0]!.n as number;
    const before = Number(
      (
        await ctx.store.admin`select count(*)::int as n from audit.event where node = 'hog' and kind like 'refused-%'`
      )[0]!.n,
    );
    const said: number[] = [];
    for (let i = 0; i < 50; i++) said.push(await refuse(i % 2 ? 'forged' : 'malformed', `reason ${i}`));
    assert.equal(said.slice(0, 4), [1, 1, 2, 2], 'each kind counted on its own');
    assert.is(said[49], 25);
    const after = Number(
      (
        await ctx.store.admin`select count(*)::int as n from audit.event where node = 'hog' and kind like 'refused-%'`
      )[0]!.n,
    );
    assert.is(after - before, 2, 'one history row a kind, not fifty');
    const [row] = await sql`select fault, reason, times from inventory.refusal where node = 'hog'`;
    assert.equal(row, { fault: 'forged', reason: 'reason 49', times: 25 }, 'the row says the last, and how many');
    // Past the window, a kind is news again.
    await ctx.store.admin`update inventory.refusal_said set since = now() - interval '2 hours' where node = 'hog'`;
    assert.is(await refuse('forged', 'later'), 1);
  },
);

B(
  'each chunk of an agent package is handed to a node once per interval: an ask for none new is refused (MSHZ9), another node is served',
  async (ctx) => {
    const sql = ctx.as.inventory;
    await sql`select inventory.set_answer_every(interval '1 hour')`;
    const pkg = 'c'.repeat(64);
    const take = (node: string, first: number, last: number) =>
      sql`select inventory.take_chunks(${node}, ${pkg}, ${first}, ${last}) as n`.then((r) => r[0]!.n as number[]);
    assert.equal(await take('hog', 0, 3), [0, 1, 2, 3]);
    const e = await refusedWith(sql`select inventory.take_chunks('hog', ${pkg}, 0, 3)`, 'MSHZ9');
    assert.match(e.message, /hog asked again for chunks 0 to 3 of package cccccccccccc/);
    // A window overlapping the one handed: only what is new is handed.
    assert.equal(await take('hog', 2, 5), [4, 5]);
    await refusedWith(sql`select inventory.take_chunks('hog', ${pkg}, 1, 5)`, 'MSHZ9');
    // Another node is handed the same chunks: the bound is each node's own.
    assert.equal(await take('calm', 0, 3), [0, 1, 2, 3]);
    // Past the interval, the chunks are handed again, and the node's old marks are pruned.
    await sql`select inventory.set_answer_every(interval '0')`;
    assert.equal(await take('hog', 0, 1), [0, 1]);
    const [kept] = await sql`select count(*)::int as n from inventory.chunk_handed where node = 'hog'`;
    assert.is(kept!.n, 2, 'the node keeps only the marks of the interval');
    const [theirs] = await sql`select count(*)::int as n from inventory.chunk_handed where node = 'calm'`;
    assert.is(theirs!.n, 4, "hog's pruning leaves calm's marks");
    // The interval over is over at its very end: an interval of 0 hands a chunk again even at the same instant.
    const again = await sql.begin(async (tx) => [
      (await tx`select inventory.take_chunks('hog', ${pkg}, 0, 1) as n`)[0]!.n as number[],
      (await tx`select inventory.take_chunks('hog', ${pkg}, 0, 1) as n`)[0]!.n as number[],
    ]);
    assert.equal(again, [
      [0, 1],
      [0, 1],
    ]);
    await sql`select inventory.set_answer_every(interval '15 seconds')`;
  },
);

B.run();
