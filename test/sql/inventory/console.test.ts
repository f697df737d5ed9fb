// The console's sign-in rules (inventory 0005) as mesh_inventory calls them:
// a link is spent once (as E1), only hashes are kept, expiry is the
// database's to judge; and a change to nodes or reports is told on the
// channel the console listens on, once a statement however many rows moved.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { openRoles, closeRoles, refusedWith, enrol, type SqlCtx } from '../helpers.js';

const S = suite<SqlCtx>('console sign-in, as mesh_inventory');
S.before(async (ctx) => { Object.assign(ctx, await openRoles()); });
S.after(async (ctx) => { await closeRoles(ctx); });

const sha = (b: Buffer) => createHash('sha256').update(b).digest();
const issue = (sql: postgres.Sql, h: Buffer, ttl = '10 minutes') => sql`select inventory.issue_console_token(token_hash => ${h}::bytea, ttl => ${ttl}::interval) as expires`;
const spend = (sql: postgres.Sql, h: Buffer, session = sha(randomBytes(32)), ttl = '12 hours') =>
  sql`select inventory.spend_console_token(token_hash => ${h}::bytea, session_hash => ${session}::bytea, session_ttl => ${ttl}::interval) as expires`;
const open = async (sql: postgres.Sql, session: Buffer) => (await sql`select inventory.console_session_open(session_hash => ${session}::bytea) as o`)[0]!.o as boolean;

S('a link must live for some time (MSH08)', async (ctx) => {
  await refusedWith(issue(ctx.as.inventory, sha(randomBytes(32)), '0 seconds'), 'MSH08');
  await refusedWith(issue(ctx.as.inventory, sha(randomBytes(32)), '-5 minutes'), 'MSH08');
});

S('of many concurrent spends of one link exactly one opens a session; the rest are refused (MSH09)', async (ctx) => {
  const h = sha(randomBytes(32));
  await issue(ctx.as.inventory, h);
  const sql = postgres(ctx.store.url('inventory'), { max: 20, onnotice: () => {} });
  try {
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => spend(sql, h).then(() => 'open', (e) => (e as postgres.PostgresError).code)));
    assert.is(outcomes.filter((o) => o === 'open').length, 1, outcomes.join(','));
    assert.is(outcomes.filter((o) => o === 'MSH09').length, 19);
  } finally { await sql.end(); }
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

S('a statement that moves nodes or reports notifies the console, once however many rows it moved', async (ctx) => {
  for (const n of ['n1', 'n2', 'n3']) await enrol(ctx.as, n);
  const heard: string[] = [];
  const listener = postgres(ctx.store.url('inventory'), { max: 1, onnotice: () => {} });
  try {
    await listener.listen('mesh_inventory_changed', (p) => heard.push(p));
    await ctx.as.inventory`select inventory.mark_heard_many(array['n1', 'n2', 'n3'])`;
    await ctx.as.inventory`select inventory.record_report(node_name => 'n1', report_serial => 1, held_now => '[]'::jsonb, failed_now => '[]'::jsonb)`;
    await ctx.as.inventory`select inventory.mark_heard('n2')`;
    const end = Date.now() + 5_000;
    while (heard.length < 4 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    // record_report moves last_seen (node) and the report: two tables, two notifications.
    assert.equal(heard, ['node', 'node', 'report', 'node']);
  } finally { await listener.end(); }
});

S.run();
