// P1: the console logs in as a reader of each context it shows. As those
// roles no table of any of its contexts takes an INSERT, UPDATE or DELETE
// (PostgreSQL's own refusal, 42501), nor does a function that writes as its
// caller; the console still signs in and out (inventory's security-definer
// functions) and reads every figure its pages show, through the same
// functions the CLI prints.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import postgres from 'postgres';
import { createHash, randomBytes } from 'node:crypto';
import { CONSOLE_CONTEXTS, type ConsoleContext } from '../../src/console/contexts.js';
import { storeVariable } from '../../src/store/contexts.js';
import { openRoles, closeRoles, refusedWith, enrol, type SqlCtx } from '../sql/helpers.js';
import {
  openSession,
  closeSession,
  sessionLeft,
  readFailing,
  readReport,
  readRefusal,
} from '../../src/inventory/console.js';
import { readNodeStatus, readFleetCounts } from '../../src/inventory/node.js';
import { readDrift } from '../../src/inventory/drift.js';
import { readHistory, readKinds } from '../../src/audit/log.js';
import { readSerials, readNodeDeclarations } from '../../src/assignment/console.js';
import { readRollouts, readRolloutStatus } from '../../src/assignment/rollout.js';
import { readOverlay } from '../../src/overlay/show.js';
import { readModules } from '../../src/catalogue/module_list.js';
import { readPromises } from '../../src/assignment/promise.js';
import { readFreezes } from '../../src/assignment/freeze.js';
import { readDiff } from '../../src/assignment/history.js';

interface Ctx extends SqlCtx {
  reader: Record<ConsoleContext, postgres.Sql>;
}

const R = suite<Ctx>('the console reads as readers and writes only its sign-in');
R.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  ctx.reader = Object.fromEntries(
    CONSOLE_CONTEXTS.map((c) => [c, postgres(ctx.store.consoleEnv[storeVariable(c)]!, { max: 2, onnotice: () => {} })]),
  ) as Ctx['reader'];
  await enrol(ctx.as, 'web1');
});
R.after(async (ctx) => {
  await Promise.allSettled(Object.values(ctx.reader ?? {}).map((s) => s.end({ timeout: 5 })));
  await closeRoles(ctx);
});

R('P1: the console logs in as a reader of each context, never as its owner', async (ctx) => {
  for (const c of CONSOLE_CONTEXTS) {
    const [r] = await ctx.reader[c]`select session_user::text as who,
      (select count(*)::int from pg_class k join pg_namespace n on n.oid = k.relnamespace
        where n.nspname = ${c} and pg_get_userbyid(k.relowner) = session_user) as owns`;
    assert.equal(r, { who: `mesh_${c}_reader`, owns: 0 }, c);
  }
});

R('P1: as the console, an INSERT, UPDATE or DELETE on any table of its contexts is refused (42501)', async (ctx) => {
  let tried = 0;
  for (const c of CONSOLE_CONTEXTS) {
    const tables = await ctx.store.admin<{ t: string; col: string | null }[]>`
      select format('%I.%I', n.nspname, k.relname) as t,
             (select quote_ident(a.attname) from pg_attribute a
               where a.attrelid = k.oid and a.attnum > 0 and not a.attisdropped and a.attidentity = '' and a.attgenerated = ''
               order by a.attnum limit 1) as col
        from pg_class k join pg_namespace n on n.oid = k.relnamespace
       where n.nspname = ${c} and k.relkind in ('r', 'p') order by 1`;
    assert.ok(tables.length > 0, `${c} has tables`);
    for (const { t, col } of tables) {
      await refusedWith(ctx.reader[c].unsafe(`insert into ${t} default values`), '42501');
      if (col) await refusedWith(ctx.reader[c].unsafe(`update ${t} set ${col} = ${col} where false`), '42501');
      await refusedWith(ctx.reader[c].unsafe(`delete from ${t} where false`), '42501');
      tried++;
    }
  }
  assert.ok(tried > 20, `every table of the console's contexts tried (${tried})`);
  // A function that writes as its caller writes nothing as a reader: issuing a sign-in link is the CLI's, not the console's.
  await refusedWith(
    ctx.reader
      .inventory`select inventory.issue_console_token(token_hash => ${randomBytes(32)}::bytea, ttl => ${'1 minute'}::interval)`,
    '42501',
  );
});

R('P1: as the console, a link signs in once and the session signs out', async (ctx) => {
  const secret = randomBytes(32).toString('base64url');
  const hash = createHash('sha256').update(secret).digest();
  await ctx.as
    .inventory`select inventory.issue_console_token(token_hash => ${hash}::bytea, ttl => ${'10 minutes'}::interval)`;
  const inv = ctx.reader.inventory;
  const { cookie } = await openSession(inv as never, secret, '1h');
  const left = await sessionLeft(inv as never, cookie);
  assert.ok(left !== null && left > 0, `the session is open (${left})`);
  await refusedWith(openSession(inv as never, secret, '1h'), 'MSH09');
  await closeSession(inv as never, cookie);
  assert.is(await sessionLeft(inv as never, cookie), null, 'signed out');
});

R('P1: as the console, every figure its pages show is read', async (ctx) => {
  const r = ctx.reader as unknown as Record<ConsoleContext, never>;
  const nodes = await readNodeStatus(r.inventory);
  assert.equal(
    nodes.map((n) => n.name),
    ['web1'],
  );
  const page = await readNodeStatus(r.inventory, { limit: 10, prefix: 'web', after: 'a' });
  assert.equal(
    page.map((n) => n.name),
    ['web1'],
  );
  assert.equal((await readFleetCounts(r.inventory, { site: 'nowhere' })).matching, 0);
  await readFailing(r.inventory);
  await readReport(r.inventory, 'web1');
  await readRefusal(r.inventory, 'web1');
  await readDrift(r.inventory, 'web1');
  await readSerials(r.assignment);
  await readNodeDeclarations(r.assignment, 'web1');
  await readRollouts(r.assignment);
  await ctx.as.assignment`select assignment.hold_changes()`;
  const held = await readRolloutStatus(r.assignment);
  assert.is((held as { state?: string } | null)?.state, 'holding');
  assert.type(held?.pending, 'number');
  await readPromises(r.assignment);
  await readFreezes(r.assignment);
  await readDiff(r.assignment, undefined, '1h', 'now');
  await readOverlay(r.overlay);
  await readModules(r.catalogue);
  await readKinds(r.audit);
  await readHistory(r.audit, { node: 'web1' });
});

R.run();
