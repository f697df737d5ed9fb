// The outbox's SQL as mesh_assignment (W1): two drains at once never take the
// same row; a failed row waits out its backoff and says why; a delivered row
// leaves what is owed; a row held by a drain that died is owed again. Each
// envelope is stored once: a row names its declaration and the drain reads
// that declaration's envelope.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { openRoles, closeRoles, enrol, refusedWith, type SqlCtx } from '../helpers.js';

const W = suite<SqlCtx>('the outbox, as mesh_assignment');
const ROWS = 40;

W.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  await enrol(ctx.as, 'web1');
  const serials = Array.from({ length: ROWS }, (_, i) => i + 1);
  await ctx.as
    .assignment`select assignment.record_declarations(${serials.map(() => 'web1')}::text[], ${serials}::bigint[],
    ${serials.map(() => '00'.repeat(32))}::text[], ${serials.map(() => '00'.repeat(32))}::text[], ${serials.map((s) => `{"serial":${s}}`).join('\n')}::text)`;
});
W.after(async (ctx) => {
  await closeRoles(ctx);
});

W("each row owes its own declaration: take_owed hands out that declaration's envelope, stored once", async (ctx) => {
  // Taken and let go at once (the statement's own transaction): nothing is marked.
  const rows = await ctx.as
    .assignment`select serial::int as s, convert_from(payload, 'utf8') as p from assignment.take_owed(${ROWS * 2}, now())`;
  assert.is(rows.length, ROWS, 'one row a declaration, none twice');
  assert.equal(
    rows.map((r) => r.p),
    rows.map((r) => `{"serial":${r.s}}`),
    'each row carries the envelope of the serial it owes',
  );
  // A row owing a declaration that was never recorded would publish nothing: refused.
  await refusedWith(
    ctx.as.assignment`insert into assignment.outbox (node, kind, serial) values ('web1', 'declaration', ${ROWS + 1})`,
    '23503',
  );
});

const owed = async (ctx: SqlCtx) =>
  (await ctx.as.assignment`select count(*)::int as n from assignment.pending_delivery`)[0]!.n;

W(
  'two drains at once take disjoint rows (for update skip locked); a drain that died leaves its rows owed',
  async (ctx) => {
    assert.is(await owed(ctx), ROWS);
    const a = await ctx.as.assignment.reserve();
    const b = await ctx.as.assignment.reserve();
    try {
      await a`begin`;
      await b`begin`;
      // Were the first drain's rows waited for rather than skipped, this fails instead of hanging;
      // and a mark that reached for rows the other drain holds fails the same way.
      await a`set local lock_timeout = '2s'`;
      await b`set local lock_timeout = '2s'`;
      const takenA = (await a`select id from assignment.take_owed(25, now())`).map((r) => String(r.id));
      const takenB = (await b`select id from assignment.take_owed(25, now())`).map((r) => String(r.id));
      assert.is(takenA.length, 25);
      assert.is(takenB.length, ROWS - 25, 'the second drain takes only what the first does not hold');
      assert.equal(
        takenA.filter((id) => takenB.includes(id)),
        [],
        'no row taken twice',
      );
      await a`select assignment.mark_delivered(${takenA}::bigint[])`;
      await a`commit`;
      await b`rollback`; // as a drain killed before its confirms: its rows stay owed
    } finally {
      a.release();
      b.release();
    }
    assert.is(await owed(ctx), ROWS - 25);
  },
);

W('a failed row says why and waits out its backoff; the broker back, everything owed is due at once', async (ctx) => {
  const rows = await ctx.as.assignment.begin(async (tx) => {
    const t = (await tx`select id from assignment.take_owed(100, now())`).map((r) => String(r.id));
    await tx`select assignment.mark_failed(${t}::bigint[], ${t.map(() => 'the broker cannot be reached (test)')}::text[])`;
    return t;
  });
  assert.is(rows.length, ROWS - 25);
  const [p] = await ctx.as
    .assignment`select min(attempts)::int as a, bool_and(last_error = 'the broker cannot be reached (test)') as said,
                                             bool_and(next_attempt_at > now()) as later from assignment.pending_delivery`;
  assert.equal({ ...p }, { a: 1, said: true, later: true });
  assert.is(
    (await ctx.as.assignment`select count(*)::int as n from assignment.take_owed(100, now())`)[0]!.n,
    0,
    'not due again before its backoff',
  );
  assert.is(
    (await ctx.as.assignment`select count(*)::int as n from assignment.take_owed(100, 'infinity')`)[0]!.n,
    ROWS - 25,
  );
  assert.is(
    (await ctx.as.assignment`select assignment.owed_now() as o`)[0]!.o,
    false,
    'the idle sweep finds nothing due',
  );
});

W('a failure marks only the rows it names: the others keep their attempts and stay due', async (ctx) => {
  const serials = [ROWS + 1, ROWS + 2];
  await ctx.as
    .assignment`select assignment.record_declarations(${serials.map(() => 'web1')}::text[], ${serials}::bigint[],
    ${serials.map(() => '00'.repeat(32))}::text[], ${serials.map(() => '00'.repeat(32))}::text[], ${serials.map((s) => `{"serial":${s}}`).join('\n')}::text)`;
  const state = async () =>
    (
      await ctx.as
        .assignment`select serial::int as s, attempts, last_error from assignment.pending_delivery order by serial`
    ).map((r) => ({ s: r.s, attempts: r.attempts, error: r.last_error }));
  const before = await state();
  await ctx.as.assignment.begin(async (tx) => {
    const t = await tx`select id, serial::int as s from assignment.take_owed(100, now()) order by serial`;
    assert.equal(
      t.map((r) => r.s),
      serials,
      'the two new rows are due, the failed ones wait',
    );
    await tx`select assignment.mark_failed(${[String(t[0]!.id)]}::bigint[], ${['only this one']}::text[])`;
  });
  const after = await state();
  assert.equal(
    after.find((r) => r.s === ROWS + 1),
    { s: ROWS + 1, attempts: 1, error: 'only this one' },
  );
  assert.equal(
    after.find((r) => r.s === ROWS + 2),
    { s: ROWS + 2, attempts: 0, error: null },
    'the row it did not name is untouched',
  );
  assert.equal(
    after.filter((r) => r.s <= ROWS),
    before.filter((r) => r.s <= ROWS),
    'nor any row failed before',
  );
});

W("a failure said of a row already delivered changes nothing: the broker's confirm stands", async (ctx) => {
  // Two drains' answers for one row can cross (a confirm, then a late error on a closed channel).
  const [d] = await ctx.as
    .assignment`select id, attempts, last_error from assignment.outbox where delivered_at is not null order by id limit 1`;
  assert.ok(d, 'the drains above delivered rows');
  await ctx.as.assignment`select assignment.mark_failed(${[String(d!.id)]}::bigint[], ${['too late']}::text[])`;
  const [a] = await ctx.as
    .assignment`select attempts, last_error, delivered_at is not null as delivered from assignment.outbox where id = ${d!.id}`;
  assert.equal({ ...a }, { attempts: d!.attempts, last_error: d!.last_error, delivered: true });
});

W('a row is due at the very instant of its next attempt, not a tick later', async (ctx) => {
  // In SQL throughout: a timestamptz has microseconds, a JavaScript Date only milliseconds.
  const [r] = await ctx.as.assignment`
    with waiting as (select min(next_attempt_at) as t from assignment.outbox where delivered_at is null and next_attempt_at > now())
    select (select count(*)::int from assignment.outbox, waiting where delivered_at is null and next_attempt_at = waiting.t) as exact,
           (select count(*)::int from waiting, assignment.take_owed(100, waiting.t - interval '1 microsecond')) as before,
           (select count(*)::int from waiting, assignment.take_owed(100, waiting.t)) as at`;
  assert.ok(r!.exact > 0, 'the suite left rows waiting out their backoff');
  assert.is(r!.at, r!.before + r!.exact, 'the rows due at that instant are taken at it');
});

W.run();
