// S5 without a window, in SQL: the provider is declared every generation of a
// pair's credential some holder may still use, from the newest one every
// holder acknowledged (settled) to the newest made; only when every holder
// acknowledged the newest does its composition drop the others, so W2 owes it
// a declaration, and nobody else. Each context as its own role; declarations
// recorded and acknowledged the way declare and serve's report handler do.
import { suite } from '../../harness/suite.js';
import * as assert from 'uvu/assert';
import {
  openRoles,
  closeRoles,
  refusedWith,
  pgAndApp,
  enrol,
  assign,
  putModule,
  declareOne,
  type SqlCtx,
  type Enrolled,
} from '../helpers.js';

interface Ctx extends SqlCtx {
  db1: Enrolled;
  web1: Enrolled;
  gen: number;
}
const R = suite<Ctx>('rotation overlap, as each context');
const SECRET = 'provision/appdb/app';

R.before(async (ctx) => {
  Object.assign(ctx, await openRoles());
  Object.assign(ctx, await pgAndApp(ctx.as));
  await ctx.as.provision`select provision.set_files_root('/etc/mesh/provision')`;
  await ctx.as
    .provision`select provision.offer(provision_name => 'appdb', provision_kind => 'postgres', provider_module => 'pg', provision_facts => '{"host": "db1", "port": 5432}'::jsonb)`;
  await ctx.as
    .provision`select provision.grant(provision_name => 'appdb', consumer_module => 'app', grant_facts => '{"database": "app", "user": "app_user"}'::jsonb)`;
  ctx.gen = 0;
});
R.after(async (ctx) => {
  await closeRoles(ctx);
});

/** A blob per holder and generation, so which generation a declaration carried is plain. */
const blob = (holder: string, gen: number) => Buffer.from(`${holder} generation ${gen}`).toString('base64');

/** A rotation's store step, as the secret context does it. */
async function rotate(ctx: Ctx, holders: Enrolled[] = [ctx.db1, ctx.web1], secret = SECRET): Promise<number> {
  ctx.gen++;
  const [r] = await ctx.as
    .secret`select secret.put_made(secret_name => ${secret}::text, holders => ${holders.map((h) => h.name)}::text[],
    sealed_to => ${holders.map((h) => h.sealing.toString('hex'))}::text[],
    blobs => ${holders.map((h) => blob(h.name, ctx.gen))}::text[]) as g`;
  return Number(r!.g);
}

const declare = (ctx: Ctx, node: string) => declareOne(ctx.as, node);
const acknowledge = (ctx: Ctx, node: string, serial: number) =>
  ctx.as.assignment`select assignment.acknowledge(${node}, ${serial}, '{}'::bigint[])`;

/** What a node's composition holds of the pair: its sealed files' blobs by path, and the login roles its binds name. */
async function held(ctx: Ctx, node: string) {
  const [c] = await ctx.as.assignment`select assignment.compose(${node}) as r`;
  const rs = c!.r as { id: string; kind: string; path: string; sealed?: string; content?: string }[];
  const secrets = Object.fromEntries(
    rs
      .filter((r) => r.kind === 'secret' && r.path.includes('/appdb'))
      .map((r) => [r.path.replace(/^.*\//, ''), Buffer.from(r.sealed!, 'base64').toString()]),
  );
  const binds = rs.find((r) => r.kind === 'file' && r.path.endsWith('.binds') && r.path.includes('appdb'));
  const facts = JSON.parse(Buffer.from(binds!.content!, 'base64').toString());
  return { secrets, logins: facts.logins?.map((l: { role: string }) => l.role), login: facts.login };
}
async function rotation(ctx: Ctx) {
  const [r] = await ctx.as
    .provision`select generation, settled, waiting_for from provision.rotation where secret = ${SECRET}`;
  return { generation: r!.generation, settled: r!.settled, waiting: r!.waiting_for };
}
const settledBy = async (ctx: Ctx, node: string) =>
  (await ctx.as.provision`select secret, settled from provision.settled_by(${node})`).map((r) => [r.secret, r.settled]);
const affected = async (ctx: Ctx) =>
  (await ctx.as.assignment`select node from assignment.affected_nodes()`).map((r) => r.node);

R('S5: the first generation is one login role on each end; acknowledged by both, it is settled', async (ctx) => {
  await rotate(ctx);
  assert.equal(await held(ctx, 'db1'), {
    secrets: { 'app.secret': 'db1 generation 1' },
    logins: ['app_user-1'],
    login: undefined,
  });
  assert.equal(await held(ctx, 'web1'), {
    secrets: { 'appdb.secret': 'web1 generation 1' },
    logins: undefined,
    login: 'app_user-1',
  });
  assert.equal(await rotation(ctx), { generation: 1, settled: null, waiting: ['db1', 'web1'] });
  for (const n of ['db1', 'web1']) await acknowledge(ctx, n, await declare(ctx, n));
  assert.equal(await rotation(ctx), { generation: 1, settled: 1, waiting: [] });
  assert.equal(await affected(ctx), []);
});

R(
  'S5: a rotation keeps the old credential on the provider until every holder acknowledged the new one, then drops it',
  async (ctx) => {
    await rotate(ctx);
    assert.equal(await held(ctx, 'db1'), {
      secrets: { 'app.secret': 'db1 generation 2', 'app.1.secret': 'db1 generation 1' },
      logins: ['app_user-2', 'app_user-1'],
      login: undefined,
    });
    assert.equal(await held(ctx, 'web1'), {
      secrets: { 'appdb.secret': 'web1 generation 2' },
      logins: undefined,
      login: 'app_user-2',
    });
    const d = await declare(ctx, 'db1');
    const w = await declare(ctx, 'web1');
    // Declared is not acknowledged: the consumer may never have applied it.
    assert.equal(await rotation(ctx), { generation: 2, settled: 1, waiting: ['db1', 'web1'] });
    await acknowledge(ctx, 'db1', d);
    assert.equal(await rotation(ctx), { generation: 2, settled: 1, waiting: ['web1'] });
    assert.equal(
      (await held(ctx, 'db1')).logins,
      ['app_user-2', 'app_user-1'],
      'the provider alone acknowledging settles nothing',
    );
    const [listed] = await ctx.as
      .provision`select generation, settled, waiting_for from provision.grant_status where consumer = 'app'`;
    assert.equal(
      { ...listed },
      { generation: 2, settled: 1, waiting_for: ['web1'] },
      'provision list says whom the rotation waits for',
    );
    assert.equal(await settledBy(ctx, 'db1'), []);
    assert.equal(await affected(ctx), []);
    await acknowledge(ctx, 'web1', w);
    assert.equal(await rotation(ctx), { generation: 2, settled: 2, waiting: [] });
    assert.equal(await held(ctx, 'db1'), {
      secrets: { 'app.secret': 'db1 generation 2' },
      logins: ['app_user-2'],
      login: undefined,
    });
    assert.equal(
      await affected(ctx),
      ['db1'],
      'W2 owes the provider, and only the provider, a declaration without generation 1',
    );
    assert.equal(await settledBy(ctx, 'web1'), [[SECRET, 2]], 'the report handler finds it settled');
    assert.is(
      (await ctx.as.secret`select secret.forget_earlier(${SECRET}, 2) as n`)[0]!.n,
      2,
      "both holders' copies of generation 1",
    );
    assert.equal(await settledBy(ctx, 'web1'), [], 'once forgotten, nothing more to settle');
    await acknowledge(ctx, 'db1', await declare(ctx, 'db1'));
    assert.equal(await affected(ctx), []);
  },
);

R(
  'S5: rotated again before the last one settled, the provider holds every generation from the settled one on',
  async (ctx) => {
    await rotate(ctx);
    const w3 = await declare(ctx, 'web1');
    await acknowledge(ctx, 'db1', await declare(ctx, 'db1'));
    // web1 never applied generation 3, and generation 4 is made.
    await rotate(ctx);
    assert.equal((await held(ctx, 'db1')).logins, ['app_user-4', 'app_user-3', 'app_user-2']);
    await acknowledge(ctx, 'db1', await declare(ctx, 'db1'));
    assert.equal(await rotation(ctx), { generation: 4, settled: 2, waiting: ['web1'] });
    // web1 catches up to 3 (an older declaration it applied late): 2 is no longer needed, 3 and 4 are.
    await acknowledge(ctx, 'web1', w3);
    assert.equal(await rotation(ctx), { generation: 4, settled: 3, waiting: ['web1'] });
    assert.equal((await held(ctx, 'db1')).logins, ['app_user-4', 'app_user-3']);
    assert.equal(await settledBy(ctx, 'web1'), [[SECRET, 3]]);
    await acknowledge(ctx, 'web1', await declare(ctx, 'web1'));
    assert.equal(await rotation(ctx), { generation: 4, settled: 4, waiting: [] });
    assert.equal((await held(ctx, 'db1')).logins, ['app_user-4']);
  },
);

R(
  'S5: a holder that has acknowledged no generation yet is still waited for: the provider keeps the old credential',
  async (ctx) => {
    // A second consumer joins the pair; it has applied nothing of it yet.
    const web2 = await enrol(ctx.as, 'web2');
    await assign(ctx.as, 'app', 'web2');
    const before = ctx.gen;
    await rotate(ctx, [ctx.db1, ctx.web1, web2]);
    await acknowledge(ctx, 'db1', await declare(ctx, 'db1'));
    await acknowledge(ctx, 'web1', await declare(ctx, 'web1'));
    const w2 = await declare(ctx, 'web2'); // declared, never acknowledged
    assert.equal(await rotation(ctx), { generation: ctx.gen, settled: null, waiting: ['web2'] });
    assert.ok(
      (await held(ctx, 'db1')).logins.includes(`app_user-${before}`),
      'the provider keeps the generation the others held before',
    );
    assert.equal(await settledBy(ctx, 'db1'), [], 'nothing settled: nothing forgotten');
    assert.equal(await settledBy(ctx, 'web1'), []);
    await acknowledge(ctx, 'web2', w2);
    assert.equal(await rotation(ctx), { generation: ctx.gen, settled: ctx.gen, waiting: [] });
    assert.equal((await held(ctx, 'db1')).logins, [`app_user-${ctx.gen}`], 'every holder acknowledged: dropped now');
  },
);

R(
  "S5: a holder of two pairs is told of each pair settled by that pair's own earlier copies, never the other's",
  async (ctx) => {
    // The first pair starts clean: settled at its newest, nothing earlier kept.
    const first = (await rotation(ctx)).settled as number;
    await ctx.as.secret`select secret.forget_earlier(${SECRET}, ${first})`;
    // A second pair on the same provider, held by web1 too.
    const OTHER = 'provision/appdb/app3';
    await putModule(ctx.as, 'app3');
    await ctx.as
      .provision`select provision.grant(provision_name => 'appdb', consumer_module => 'app3', grant_facts => '{"database": "app3", "user": "app3_user"}'::jsonb)`;
    await assign(ctx.as, 'app3', 'web1');
    const other = async () =>
      (
        await ctx.as.provision`select generation, settled, waiting_for from provision.rotation where secret = ${OTHER}`
      ).map((r) => ({ ...r }));
    assert.equal(await other(), [], 'granted, no credential made yet: no rotation to follow');
    for (let i = 0; i < 2; i++) {
      await rotate(ctx, [ctx.db1, ctx.web1], OTHER);
      for (const n of ['db1', 'web1']) await acknowledge(ctx, n, await declare(ctx, n));
    }
    // The other pair settled at its second generation, a copy of its first still kept.
    // The first pair made a generation nobody acknowledged: its kept copies are of the settled one, none older.
    await rotate(ctx);
    const now = await rotation(ctx);
    assert.equal([now.generation, now.settled], [first + 1, first]);
    assert.ok(first > 1, 'the first pair settled past the generation the other pair keeps');
    assert.equal(
      await settledBy(ctx, 'web1'),
      [[OTHER, 2]],
      'only the pair whose own copies are older than it settled',
    );
    // web2 holds none of the other pair: its settlement is no news to web2.
    assert.equal(await settledBy(ctx, 'web2'), [], 'only the pairs the node holds');
    // Each pair's newest generation is its own, whatever the other pair made since.
    assert.equal(await other(), [{ generation: 2, settled: 2, waiting_for: [] }]);
  },
);

R('a postgres user leaves room for its login roles: at most 52 characters (MSH55)', async (ctx) => {
  const g = (user: string) =>
    ctx.as
      .provision`select provision.grant(provision_name => 'appdb', consumer_module => 'app2', grant_facts => ${ctx.as.provision.json({ database: 'app2', user } as never)}::jsonb)`;
  await refusedWith(g('u'.repeat(53)), 'MSH55');
  await g('u'.repeat(52));
});

R.run();
