// R1-R3 at a fleet's pace: serve records the reports that arrive together in
// one statement (inventory.record_reports, src/inventory/reports.ts), and
// each report still succeeds or fails alone: a report the store refuses
// (bytes jsonb cannot hold, a version that is not one, a node the inventory
// does not hold) is refused with its own code and nothing of it kept, while
// every report beside it in the same batch is recorded.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { openRoles, closeRoles, enrol, type SqlCtx } from '../helpers.js';
import { reportEntry, reportRecorder, type ReportEntry } from '../../../src/inventory/reports.js';
import type { Report } from '../../../src/wire/report.js';

const S = suite<SqlCtx>('R1-R3: reports recorded many a statement, each alone');
S.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  for (const n of ['rb1', 'rb2', 'rb3', 'rb4', 'rb5']) await enrol(ctx.as, n);
});
S.after(async (ctx) => {
  await closeRoles(ctx);
});

const id = () => randomBytes(8).toString('hex');
const held = (path: string) => [
  { id: `file:${path}`, kind: 'file', target: path, origin: 'declared', digest: 'a'.repeat(64) },
];
const report = (serial: number, more: Partial<Report> = {}): Report => ({
  v: 1,
  serial,
  held: held('/etc/motd') as never,
  failed: [],
  corrected: [],
  superseded: [],
  agent: '0.3.2',
  ...more,
});

async function recorded(ctx: SqlCtx, node: string) {
  const [r] = await ctx.store.admin`select serial, held from inventory.report where node = ${node}`;
  return r;
}

/** Each entry's outcome through one recorder: all submitted in one turn, so they go as one batch. */
async function together(ctx: SqlCtx, entries: ReportEntry[]) {
  const record = reportRecorder(ctx.as.inventory as never);
  return Promise.allSettled(entries.map((e) => record(e)));
}

S('one batch: a refused report fails alone with its code, every other in it is recorded', async (ctx) => {
  const out = await together(ctx, [
    reportEntry('rb1', report(3), id()),
    // A held entry jsonb cannot hold (NUL): the whole batch's text reaches SQL, this entry alone fails to parse.
    reportEntry('rb2', report(4, { held: [{ ...held('/x')[0]!, target: '/x\u0000' }] as never }), id()),
    reportEntry('rb3', report(5, { agent: 'not-a-version' }), id()),
    reportEntry('nobody', report(6), id()),
    reportEntry('rb4', report(7), id()),
  ]);
  assert.equal(
    out.map((o) => (o.status === 'fulfilled' ? 'recorded' : (o.reason as { code: string }).code)),
    ['recorded', '22P05', 'MSHV1', '23503', 'recorded'],
  );
  assert.is(Number((await recorded(ctx, 'rb1'))!.serial), 3);
  assert.is(Number((await recorded(ctx, 'rb4'))!.serial), 7);
  assert.is(await recorded(ctx, 'rb2'), undefined, 'nothing of a refused report is kept');
  assert.is(await recorded(ctx, 'rb3'), undefined);
  const seen = await ctx.store.admin`select node from inventory.report_received where node in ('rb2', 'rb3')`;
  assert.is(seen.length, 0, 'a refused report is not marked seen: its redelivery is recorded as new');
});

S('a message delivered twice in one batch is recorded once; the second moves last_seen only', async (ctx) => {
  const m = id();
  const out = await together(ctx, [reportEntry('rb5', report(8), m), reportEntry('rb5', report(8), m)]);
  assert.equal(
    out.map((o) => (o.status === 'fulfilled' ? o.value.first : 'refused')),
    [true, false],
  );
});

S('a refusal, a failure and a package change in one batch each take their own record', async (ctx) => {
  await ctx.as.inventory`select inventory.record_agent_version('rb1', '0.3.1')`;
  const [refusal, failure, packages] = await together(ctx, [
    reportEntry('rb1', report(0, { refused: { serial: 9, fault: 'forged', reason: 'bad \u0000 signature' } }), id()),
    reportEntry('rb4', report(10, { failed: [{ id: 'file:/etc/x', error: 'EACCES' }] }), id()),
    reportEntry(
      'rb5',
      report(11, { packages: { base: 'f'.repeat(64), digest: 'e'.repeat(64), set: [], gone: [] } as never }),
      id(),
    ),
  ]);
  assert.is(refusal!.status, 'fulfilled');
  const r = (refusal as PromiseFulfilledResult<{ times: number; upgraded: boolean }>).value;
  assert.is(r.times, 1, 'the refusal is counted');
  assert.is(r.upgraded, true, "a refusing agent's new version is kept too");
  const [said] = await ctx.store.admin`select fault, reason from inventory.refusal where node = 'rb1'`;
  assert.equal([said!.fault, said!.reason], ['forged', 'bad \uFFFD signature']);
  assert.is(Number((await recorded(ctx, 'rb1'))!.serial), 3, "a refusal leaves the node's last report");
  const [receipt] = await ctx.store
    .admin`select serial from inventory.report_received where node = 'rb1' order by received_at desc limit 1`;
  assert.is(Number(receipt!.serial), 9, "a refusal's receipt names the refused declaration's serial");
  assert.is(failure!.status, 'fulfilled');
  const [f] = await ctx.store.admin`select serial from inventory.apply_failure where node = 'rb4'`;
  assert.is(Number(f!.serial), 10);
  assert.is(Number((await recorded(ctx, 'rb4'))!.serial), 7, "a failure leaves the node's last report");
  assert.is(packages!.status, 'fulfilled');
  assert.is(
    (packages as PromiseFulfilledResult<{ resync: boolean }>).value.resync,
    true,
    'a change on a base not held',
  );
});

S.run();
