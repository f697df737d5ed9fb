// The console's sign-in rules (inventory 0005) as mesh_inventory calls them:
// a link is spent once (as E1), only hashes are kept, expiry is the
// database's to judge; and what node_status would show anew is told on the
// channel the console listens on, while a fleet's routine heards are not.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { openRoles, closeRoles, refusedWith, enrol, tampered, type SqlCtx } from '../helpers.js';

const S = suite<SqlCtx>('console sign-in, as mesh_inventory');
S.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
});
S.after(async (ctx) => {
  await closeRoles(ctx);
});

const sha = (b: Buffer) => createHash('sha256').update(b).digest();
const issue = (sql: postgres.Sql, h: Buffer, ttl = '10 minutes') =>
  sql`select inventory.issue_console_token(token_hash => ${h}::bytea, ttl => ${ttl}::interval) as expires`;
const spend = (sql: postgres.Sql, h: Buffer, session = sha(randomBytes(32)), ttl = '12 hours') =>
  sql`select inventory.spend_console_token(token_hash => ${h}::bytea, session_hash => ${session}::bytea, session_ttl => ${ttl}::interval) as expires`;
const open = async (sql: postgres.Sql, session: Buffer) =>
  (await sql`select inventory.console_session_open(session_hash => ${session}::bytea) as o`)[0]!.o as boolean;

S('a link must live for some time (MSH08)', async (ctx) => {
  await refusedWith(issue(ctx.as.inventory, sha(randomBytes(32)), '0 seconds'), 'MSH08');
  await refusedWith(issue(ctx.as.inventory, sha(randomBytes(32)), '-5 minutes'), 'MSH08');
});

S('of many concurrent spends of one link exactly one opens a session; the rest are refused (MSH09)', async (ctx) => {
  const h = sha(randomBytes(32));
  await issue(ctx.as.inventory, h);
  const sql = postgres(ctx.store.url('inventory'), { max: 20, onnotice: () => {} });
  try {
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () =>
        spend(sql, h).then(
          () => 'open',
          (e) => (e as postgres.PostgresError).code,
        ),
      ),
    );
    assert.is(outcomes.filter((o) => o === 'open').length, 1, outcomes.join(','));
    assert.is(outcomes.filter((o) => o === 'MSH09').length, 19);
  } finally {
    await sql.end();
  }
  assert.is((await ctx.as.inventory`select count(*)::int as n from inventory.console_session`)[0]!.n, 1);
});

S('an unknown or expired link is refused (MSH09), and so is the secret where its hash belongs', async (ctx) => {
  await refusedWith(spend(ctx.as.inventory, sha(randomBytes(32))), 'MSH09');
  const secret = randomBytes(32);
  await issue(ctx.as.inventory, sha(secret), '1 second');
  await new Promise((r) => setTimeout(r, 1100));
  await refusedWith(spend(ctx.as.inventory, sha(secret)), 'MSH09');
  const fresh = randomBytes(32);
  await issue(ctx.as.inventory, sha(fresh));
  await refusedWith(spend(ctx.as.inventory, fresh), 'MSH09');
  await spend(ctx.as.inventory, sha(fresh));
});

S(
  'a link expiring at the very instant it is spent is expired (MSH09): a link lives until, not through, its expiry',
  async (ctx) => {
    // Issued a minute ago, expiring at the spending transaction's own now(): the one instant > and >= disagree.
    const h = sha(randomBytes(32));
    const outcome = await tampered(ctx, async (sql) => {
      await sql`insert into inventory.console_token (token_hash, issued_at, expires_at) values (${h}, now() - interval '1 minute', now())`;
      return sql`select inventory.spend_console_token(token_hash => ${h}::bytea, session_hash => ${sha(randomBytes(32))}::bytea, session_ttl => ${'1 hour'}::interval)`.then(
        () => 'open',
        (e) => (e as postgres.PostgresError).code,
      );
    });
    assert.is(outcome, 'MSH09');
  },
);

S('only hashes are stored: a column holds 32 bytes, nothing else', async (ctx) => {
  await refusedWith(issue(ctx.as.inventory, Buffer.from('a link secret in the clear')), '23514');
});

S('a session is open until it expires, and an unknown one never', async (ctx) => {
  const h = sha(randomBytes(32));
  await issue(ctx.as.inventory, h);
  const session = sha(randomBytes(32));
  await spend(ctx.as.inventory, h, session, '1 second');
  assert.is(await open(ctx.as.inventory, session), true);
  assert.is(await open(ctx.as.inventory, sha(randomBytes(32))), false);
  await new Promise((r) => setTimeout(r, 1100));
  assert.is(await open(ctx.as.inventory, session), false);
});

/** What the console's channel says while F runs: each notification's payload, in order. */
async function told(ctx: SqlCtx, f: () => Promise<unknown>): Promise<string[]> {
  const heard: string[] = [];
  const listener = postgres(ctx.store.url('inventory'), { max: 1, onnotice: () => {} });
  try {
    await listener.listen('mesh_inventory_changed', (p) => heard.push(p));
    await f();
    // A last change of our own marks the end: everything told before it has arrived once it has.
    await ctx.as.inventory`select pg_notify('mesh_inventory_changed', 'end')`;
    const end = Date.now() + 5_000;
    while (!heard.includes('end') && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    return heard.filter((h) => h !== 'end');
  } finally {
    await listener.end();
  }
}

const report = (ctx: SqlCtx, node: string, serial: number, held: unknown[] = []) => ctx.as
  .inventory`select inventory.record_report(node_name => ${node}::text,
  report_serial => ${serial}::bigint, held_now => ${ctx.as.inventory.json(held as never)}::jsonb, failed_now => '[]'::jsonb)`;

S(
  'the console is told when node_status would show something new: a node, a return from silence, a new report',
  async (ctx) => {
    assert.equal(await told(ctx, () => enrol(ctx.as, 'n1')), ['node', 'node'], 'issued, then enrolled');
    for (const n of ['n2', 'n3']) await enrol(ctx.as, n);
    await ctx.as.inventory`update inventory.node set last_seen = now() - interval '10 minutes' where name = 'n2'`;
    // One statement hearing three nodes, one of them back after ten minutes: one word (identical ones fold).
    assert.equal(await told(ctx, () => ctx.as.inventory`select inventory.mark_heard_many(array['n1', 'n2', 'n3'])`), [
      'node',
    ]);
    assert.equal(await told(ctx, () => report(ctx, 'n1', 1)), ['report'], 'a first report');
    assert.equal(
      await told(ctx, () => report(ctx, 'n1', 2, [{ id: 'file:/a' }])),
      ['report'],
      'a new serial and holdings',
    );
    assert.equal(await told(ctx, () => ctx.as.inventory`select inventory.retire_node('n3')`), ['node'], 'a node gone');
  },
);

S('the heard of nodes already here, and a report of the same holdings again, tell nothing', async (ctx) => {
  assert.equal(await told(ctx, () => ctx.as.inventory`select inventory.mark_heard_many(array['n1', 'n2'])`), []);
  assert.equal(await told(ctx, () => ctx.as.inventory`select inventory.mark_heard('n1')`), []);
  assert.equal(
    await told(ctx, () => report(ctx, 'n1', 2, [{ id: 'file:/a' }])),
    [],
    'a reconcile that found nothing new',
  );
});

S(
  'a failed apply arriving, changing and cleared tells the console (inventory 0009); the same failure again tells nothing',
  async (ctx) => {
    const fail = (serial: number, id: string) => ctx.as
      .inventory`select inventory.record_failure(node_name => 'n1', failed_serial => ${serial}::bigint,
    failed_now => ${ctx.as.inventory.json([{ id, error: 'no space left' }] as never)}::jsonb)`;
    assert.equal(await told(ctx, () => fail(3, 'file:/a')), ['apply_failure'], 'a failure arrives');
    assert.equal(await told(ctx, () => fail(3, 'file:/a')), [], 'the same failure, reported again');
    assert.equal(await told(ctx, () => fail(3, 'file:/b')), ['apply_failure'], 'another resource failing');
    assert.equal(
      (await told(ctx, () => report(ctx, 'n1', 3))).sort(),
      ['apply_failure', 'report'],
      'a clean report of that serial clears it',
    );
  },
);

S.run();
