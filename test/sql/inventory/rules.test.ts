// inventory's rules as its own role calls them: names, tokens (E1), reports
// (R2), heards (R3), rekeys (O3). Each refusal is asserted by its code.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { openRoles, closeRoles, refusedWith, enrol, key, tampered, type SqlCtx } from '../helpers.js';

const I = suite<SqlCtx>('inventory rules, as mesh_inventory');
I.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
});
I.after(async (ctx) => {
  await closeRoles(ctx);
});

const hash = () => createHash('sha256').update(randomBytes(24)).digest();
const issue = (ctx: SqlCtx, name: string, ttl = '1 hour', h = hash()) => ctx.as
  .inventory`select inventory.issue_token(node_name => ${name}::text,
  token_hash => ${h}::bytea, node_site => null::text, node_dialable => null::text, ttl => ${ttl}::interval) as expires`;
const spend = (sql: postgres.Sql, h: Buffer, name: string, identity = key()) =>
  sql`select inventory.spend_token(token_hash => ${h}::bytea,
  node_name => ${name}::text, identity_key => ${identity}::bytea, overlay_key => ${key()}::bytea, sealing_key => ${key()}::bytea) as outcome`.then(
    (r) => r[0]!.outcome as string,
  );
const status = async (ctx: SqlCtx, name: string) =>
  (await ctx.as.inventory`select * from inventory.node_status where name = ${name}`)[0]!;

I('a node name is [a-z][a-z0-9-]{0,62}, as the table enforces it, whatever the caller checked before', async (ctx) => {
  for (const bad of ['Web1', '1web', 'web_1', 'web.1', 'a*', 'node.#', '-a', '', 'a' + 'b'.repeat(63), 'web1\n']) {
    const e = await refusedWith(issue(ctx, bad), '23514');
    assert.is(e.constraint_name, 'node_name_check', JSON.stringify(bad));
  }
  for (const good of ['a', 'web-1', 'a' + 'b'.repeat(62)]) await issue(ctx, good);
  assert.is((await ctx.as.inventory`select count(*)::int as n from inventory.node where name !~ '^[a-z]'`)[0]!.n, 0);
});

I('a token must live for some time (MSH03)', async (ctx) => {
  await refusedWith(issue(ctx, 'ttl0', '0 seconds'), 'MSH03');
  await refusedWith(issue(ctx, 'ttl0', '-1 hour'), 'MSH03');
});

I('an enrolled node is not issued a second token (MSH02)', async (ctx) => {
  await enrol(ctx.as, 'twice');
  await refusedWith(issue(ctx, 'twice'), 'MSH02');
});

I('E1: of many concurrent spends of one token exactly one enrols; the rest are told it is spent', async (ctx) => {
  const h = hash();
  await issue(ctx, 'race', '1 hour', h);
  const conns = Array.from({ length: 8 }, () => postgres(ctx.store.url('inventory'), { max: 1, onnotice: () => {} }));
  try {
    await Promise.all(conns.map((c) => c`select 1`));
    const outcomes = await Promise.all(conns.map((c) => spend(c, h, 'race')));
    assert.is(outcomes.filter((o) => o === 'enrolled').length, 1, outcomes.join(', '));
    assert.is(outcomes.filter((o) => o === 'token already spent').length, 7, outcomes.join(', '));
  } finally {
    await Promise.all(conns.map((c) => c.end()));
  }
  assert.is(await spend(ctx.as.inventory, h, 'race'), 'token already spent', 'spent stays spent');
});

I('E1/E3: a token is refused for another node, unknown, or expired, each said apart for the log', async (ctx) => {
  const h = hash();
  await issue(ctx, 'mine', '1 hour', h);
  assert.is(await spend(ctx.as.inventory, h, 'yours'), 'token is for node mine');
  assert.is(await spend(ctx.as.inventory, hash(), 'mine'), 'unknown token');
  const short = hash();
  await issue(ctx, 'brief', '1 microsecond', short);
  assert.is(await spend(ctx.as.inventory, short, 'brief'), 'token expired');
  const identity = key();
  assert.is(await spend(ctx.as.inventory, h, 'mine', identity), 'enrolled');
  assert.is(
    await spend(ctx.as.inventory, h, 'mine', identity),
    'again',
    'the same identity asking twice is a redelivery',
  );
  const [b] = await ctx.as.inventory`select last_seen from inventory.node where name = 'brief'`;
  assert.ok(b, 'brief is a node, issued a token');
  assert.is(b!.last_seen, null, "a redelivery of mine's enrolment moves no other node's last_seen");
  // A token expiring at the spending transaction's own now() is expired: the one instant > and >= disagree.
  const edge = hash();
  await issue(ctx, 'edge', '1 hour', edge);
  const atEdge = await tampered(ctx, async (sql) => {
    await sql`update inventory.token set issued_at = now() - interval '1 minute', expires_at = now() where token_hash = ${edge}`;
    return spend(sql as unknown as postgres.Sql, edge, 'edge');
  });
  assert.is(atEdge, 'token expired');
  const [t] = await ctx.as.inventory`select octet_length(token_hash) as n from inventory.token where node = 'mine'`;
  assert.is(t!.n, 32, 'stored hashed');
});

I('R3: a heard from a node that never enrolled does not make it here: never spoken stays never spoken', async (ctx) => {
  await issue(ctx, 'silent');
  const [one] = await ctx.as.inventory`select inventory.mark_heard(node_name => 'silent') as heard`;
  assert.is(one!.heard, null, 'mark_heard moved nothing');
  const [many] = await ctx.as.inventory`select inventory.mark_heard_many(node_names => ${['silent']}::text[]) as n`;
  assert.is(many!.n, 0, 'mark_heard_many moved nothing');
  const s = await status(ctx, 'silent');
  assert.is(s.state, 'never spoken');
  assert.is(s.last_seen, null);
});

I('R3: a heard moves last_seen of an enrolled node, and nothing of its last report', async (ctx) => {
  await enrol(ctx.as, 'chatty');
  await ctx.as
    .inventory`select inventory.record_report(node_name => 'chatty', report_serial => 3, held_now => '[{"id":"file:/etc/x"}]'::jsonb, failed_now => '[]'::jsonb)`;
  const report = async () =>
    (
      await ctx.as
        .inventory`select serial::int, held::text, failed::text, reported_at from inventory.report where node = 'chatty'`
    )[0];
  const before = await report();
  await ctx.as.inventory`update inventory.node set last_seen = now() - interval '1 hour' where name = 'chatty'`;
  assert.match((await status(ctx, 'chatty')).state, /^out of touch/);
  await ctx.as.inventory`select inventory.mark_heard_many(node_names => ${['chatty']}::text[])`;
  assert.is((await status(ctx, 'chatty')).state, 'here');
  assert.equal(await report(), before, "serve's batched heard left the report as it was");
  await ctx.as.inventory`update inventory.node set last_seen = now() - interval '1 hour' where name = 'chatty'`;
  await ctx.as.inventory`select inventory.mark_heard(node_name => 'chatty')`;
  assert.is((await status(ctx, 'chatty')).state, 'here');
  assert.equal(await report(), before, 'a single heard left the report as it was');
});

I('R2: the last report never goes back to an older serial when reports arrive out of order', async (ctx) => {
  await enrol(ctx.as, 'rep');
  const report = (serial: number, held: unknown[]) => ctx.as
    .inventory`select inventory.record_report(node_name => 'rep',
    report_serial => ${serial}::bigint, held_now => ${ctx.as.inventory.json(held as never)}::jsonb, failed_now => '[]'::jsonb)`;
  await report(5, [{ id: 'file:/five' }]);
  await report(3, [{ id: 'file:/three' }]);
  const [r] = await ctx.as.inventory`select serial, held from inventory.report where node = 'rep'`;
  assert.is(Number(r!.serial), 5);
  assert.equal(r!.held, [{ id: 'file:/five' }]);
  await report(6, []);
  const s = await status(ctx, 'rep');
  assert.is(Number(s.reported_serial), 6);
  assert.is(s.holds, 0, '"reported nothing" is an empty list, not "never reported"');
  await refusedWith(
    ctx.as
      .inventory`select inventory.record_report(node_name => 'nobody', report_serial => 1, held_now => '[]'::jsonb, failed_now => '[]'::jsonb)`,
    'MSH04',
  );
});

I('R3, C1: a failure report that arrives late never replaces the failure of a newer declaration', async (ctx) => {
  await enrol(ctx.as, 'fail');
  const failure = (serial: number, id: string) => ctx.as
    .inventory`select inventory.record_failure(node_name => 'fail', failed_serial => ${serial}::bigint,
    failed_now => ${ctx.as.inventory.json([{ id, error: `${id} could not be applied` }] as never)}::jsonb) as recorded`;
  const kept = async () =>
    (await ctx.as.inventory`select serial::int as serial, failed from inventory.apply_failure where node = 'fail'`).map(
      (r) => ({ serial: r.serial, ids: (r.failed as { id: string }[]).map((f) => f.id) }),
    );
  await failure(7, 'file:/seven');
  // The report of serial 5 was held up on its way: what the rollout judges is still serial 7's failure.
  assert.is((await failure(5, 'file:/five'))[0]!.recorded, true, 'heard all the same');
  assert.equal(await kept(), [{ serial: 7, ids: ['file:/seven'] }], 'the failure of the newer declaration stays');
  await failure(8, 'file:/eight');
  assert.equal(await kept(), [{ serial: 8, ids: ['file:/eight'] }], 'a newer failure replaces it');
  const clean = (serial: number) => ctx.as.inventory`select inventory.record_report(node_name => 'fail',
    report_serial => ${serial}::bigint, held_now => '[]'::jsonb, failed_now => '[]'::jsonb)`;
  await clean(6);
  assert.equal(await kept(), [{ serial: 8, ids: ['file:/eight'] }], 'a clean report of an older serial clears nothing');
  await clean(8);
  assert.equal(await kept(), [], 'a clean report of that serial clears it');
});

I('O3: a rekey is a compare-and-swap; each refusal has its code (MSH04-MSH07)', async (ctx) => {
  const a = await enrol(ctx.as, 'rk-a');
  const b = await enrol(ctx.as, 'rk-b');
  const rekey = (node: string, left: Buffer, taken: Buffer) =>
    ctx.as.inventory`select inventory.set_overlay_key(node_name => ${node}::text,
    left_key => ${left}::bytea, taken_key => ${taken}::bytea) as outcome`.then((r) => r[0]!.outcome as string);
  await refusedWith(rekey('rk-a', a.overlay, randomBytes(31)), 'MSH05');
  await refusedWith(rekey('rk-a', a.overlay, b.overlay), 'MSH06');
  await refusedWith(rekey('nobody', key(), key()), 'MSH04');
  const taken = key();
  assert.is(await rekey('rk-a', a.overlay, taken), 'rekeyed');
  assert.is(await rekey('rk-a', a.overlay, taken), 'again');
  await refusedWith(rekey('rk-a', a.overlay, key()), 'MSH07');
  const [n] = await ctx.as.inventory`select overlay_key from inventory.node where name = 'rk-a'`;
  assert.ok(Buffer.from(n!.overlay_key).equals(taken), 'a stale rekey changed nothing');
});

I.run();
