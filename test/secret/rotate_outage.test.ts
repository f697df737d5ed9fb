// S5 and W1 together: the broker is stopped during a
// rotation. The command commits anyway and the declarations wait in the
// outbox; the consumer's old credential keeps working. When the broker
// returns, with no command typed, both ends get their files, the consumer
// connects with the new credential, the old one keeps working until both
// acknowledged, and after that it is refused. On a broker of this suite's own
// and a PostgreSQL that checks passwords.
import { suite } from '../harness/suite.js';
import * as assert from 'uvu/assert';
import { readFileSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { privateMesh, outageEnv, stopFleet, type PrivateMesh } from '../link/private_mesh.js';
import type { Proc } from '../harness/mesh.js';
import { root, until as untilShort } from '../declare/helpers.js';
import { moduleAdd } from '../../src/catalogue/module_add.js';
import { assign } from '../../src/assignment/assign.js';
import { setRoot, offer, grant } from '../../src/provision/grants.js';
import { placeSecret } from '../../src/secret/accept.js';
import { provision, said } from '../../lab/modules/pg-provisioner.js';
import { pgConnection } from '../../lab/modules/pg-consumer.js';
import { startScramPostgres, connectAs, refused, type ScramPg } from './scram_pg.js';

interface Ctx {
  pm: PrivateMesh;
  serve: Proc;
  root: string;
  pg: ScramPg;
  db1: Proc;
  web1: Proc;
}
const R = suite<Ctx>('a rotation through a broker outage (S5, W1)');
// Hosts apply on a machine other suites share: wait on what they write, never on time.
const until = <T>(what: string, f: () => Promise<T | undefined | null | false>) => untilShort(what, f, 180_000);

const provides = (ctx: Ctx, file: string) => join(ctx.root, 'provides', 'appdb', file);
const uses = (ctx: Ctx, ext: string) => join(ctx.root, 'uses', 'app', `appdb.${ext}`);
const read = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : undefined);
const adminFile = (ctx: Ctx) => join(ctx.root, 'db1', 'pg-admin');

/** The provider module over the directory db1's host wrote (as its restartOn service would run after each apply). */
async function provisioner(ctx: Ctx): Promise<string> {
  return (
    await provision(join(ctx.root, 'provides', 'appdb'), {
      host: '127.0.0.1',
      port: ctx.pg.port,
      user: 'postgres',
      passwordFile: adminFile(ctx),
    })
  )
    .map(said)
    .join('\n');
}

async function rotation(ctx: Ctx) {
  const [r] = await ctx.pm.store
    .admin`select generation, settled, waiting_for from provision.rotation where secret = 'provision/appdb/app'`;
  return {
    generation: Number(r!.generation),
    settled: r!.settled === null ? null : Number(r!.settled),
    waiting: r!.waiting_for as string[],
  };
}

R.before(async (ctx) => {
  ctx.pm = await privateMesh();
  ctx.root = root();
  ctx.pg = await startScramPostgres();
  ctx.serve = await ctx.pm.serve();
  // Setup runs the command functions in this process; the rotation under test goes through the real CLI.
  Object.assign(process.env, ctx.pm.env);
  const [db1, web1] = await Promise.all(['db1', 'web1'].map((n) => ctx.pm.joined(n, outageEnv(ctx.root))));
  ctx.db1 = db1!.proc;
  ctx.web1 = web1!.proc;
  await setRoot(ctx.root);
  for (const m of ['pg', 'app']) {
    const f = join(ctx.pm.home, `${m}.json`);
    writeFileSync(f, JSON.stringify({ name: m, resources: [] }));
    await moduleAdd(f);
  }
  await assign('pg', 'db1', true);
  await assign('app', 'web1', true);
  await offer('appdb', { kind: 'postgres', provider: 'pg', host: '127.0.0.1', port: ctx.pg.port });
  await placeSecret('pg-admin', 'accepted', { nodes: ['db1'], path: adminFile(ctx), from: ctx.pg.passwordFile });
  await grant('appdb', 'app', { database: 'app', user: 'app_user' });
  await until(
    'both ends hold generation 1',
    async () =>
      [adminFile(ctx), provides(ctx, 'app.secret'), uses(ctx, 'secret')].every(existsSync) &&
      (await rotation(ctx)).settled === 1,
  );
  assert.match(await provisioner(ctx), /created role app_user for app; database app; accepts app_user-1$/);
  assert.is(await connectAs(pgConnection(ctx.root, 'app', 'appdb')), 'app_user@app');
});

R.after(async (ctx) => {
  await stopFleet(ctx, ctx.web1);
  await ctx.pg?.stop();
});

R(
  'broker down during a rotation: it commits, and when the broker is back both ends switch and the old credential stops only after both acknowledged',
  async (ctx) => {
    const old = pgConnection(ctx.root, 'app', 'appdb');
    assert.is(old.user, 'app_user-1');
    const smark = ctx.serve.output().length;
    await ctx.pm.rabbit.halt();

    // The rotation needs no broker to commit: what it owes is in the outbox.
    const r = await ctx.pm.cli(['secret', 'rotate', 'appdb', 'app', '--json']);
    assert.is(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      generation: number;
      queuesChecked: boolean;
      window: string;
      sent: { node: string; serial: number }[];
    };
    assert.is(out.generation, 2);
    assert.is(out.queuesChecked, false, 'the broker did not answer, so no queue was looked for');
    assert.match(out.window, /The broker did not answer.*waits in the outbox/);
    const owed = JSON.parse((await ctx.pm.cli(['outbox', '--json'])).stdout) as { node: string; serial: number }[];
    for (const s of out.sent)
      assert.ok(
        owed.some((o) => o.node === s.node && o.serial === s.serial),
        `${s.node} is owed serial ${s.serial}: ${JSON.stringify(owed)}`,
      );
    assert.equal(out.sent.map((s) => s.node).sort(), ['db1', 'web1']);
    assert.is(await connectAs(old), 'app_user@app', 'while the broker is down the old credential works');
    await ctx.serve.waitFor(/serve: the outbox cannot reach the broker/, 60_000, smark);

    // A slow consumer: web1 is held still while the broker comes back, so the
    // provider applies first and the rotation waits on web1 alone.
    ctx.web1.child.kill('SIGSTOP');
    try {
      await ctx.pm.rabbit.resume();
      const [db1Serial] = out.sent.filter((s) => s.node === 'db1').map((s) => s.serial);
      await until(
        'db1 applied and acknowledged its owed declaration',
        async () =>
          (
            await ctx.pm.store
              .admin`select 1 from assignment.declaration where node = 'db1' and serial = ${db1Serial!} and acknowledged_at is not null`
          ).length > 0,
      );
      assert.ok(existsSync(provides(ctx, 'app.1.secret')), 'the provider holds generation 1 beside generation 2');
      assert.is(read(provides(ctx, 'app.1.secret')), old.password);
      assert.match(
        await provisioner(ctx),
        /updated role app_user for app; database app; accepts app_user-2, app_user-1$/,
      );
      assert.equal(await rotation(ctx), { generation: 2, settled: 1, waiting: ['web1'] });
      const listed = JSON.parse((await ctx.pm.cli(['provision', 'list', '--json'])).stdout) as {
        consumer: string;
        generation: number;
        waiting_for: string[];
      }[];
      assert.equal(
        listed.map((l) => [l.consumer, l.generation, l.waiting_for]),
        [['app', 2, ['web1']]],
        'the operator sees whom the rotation waits for',
      );
      assert.is(
        await connectAs(old),
        'app_user@app',
        "the provider applied the new credential and the consumer's old one still works",
      );
      const fresh = { ...old, user: 'app_user-2', password: read(provides(ctx, 'app.secret'))! };
      assert.is(await connectAs(fresh), 'app_user@app', 'and the new one works already');
      assert.is(read(uses(ctx, 'secret')), old.password, 'the consumer has not switched yet');
    } finally {
      ctx.web1.child.kill('SIGCONT');
    }

    // No command typed: web1 gets its file and acknowledges, serve settles the rotation and re-declares db1 without generation 1.
    await until(
      'the consumer holds generation 2',
      async () => read(uses(ctx, 'secret')) === read(provides(ctx, 'app.secret')),
    );
    const now = pgConnection(ctx.root, 'app', 'appdb');
    assert.is(now.user, 'app_user-2');
    assert.is(await connectAs(now), 'app_user@app', 'the consumer connects with the new credential');
    await until('the provider no longer holds generation 1', async () => !existsSync(provides(ctx, 'app.1.secret')));
    // It was dropped only once both had acknowledged generation 2.
    assert.equal(await rotation(ctx), { generation: 2, settled: 2, waiting: [] });
    await ctx.serve.waitFor(
      /report: provision\/appdb\/app settled at generation 2 with web1's acknowledgement; re-declaring db1 \d+/,
      60_000,
      smark,
    );
    assert.is(
      await connectAs(old),
      'app_user@app',
      'until the provider runs over its new files, the old credential still works',
    );
    assert.match(await provisioner(ctx), /accepts app_user-2; retired app_user-1$/);
    assert.ok(await refused(connectAs(old)), 'after both acknowledged, the old credential is refused');
    assert.is(await connectAs(now), 'app_user@app');
    const left = JSON.parse((await ctx.pm.cli(['outbox', '--json'])).stdout) as unknown[];
    assert.equal(left, [], 'nothing is owed any more');
    const kept = await ctx.pm.store.admin`select generation from secret.earlier where secret = 'provision/appdb/app'`;
    assert.equal(
      kept.map((k) => k.generation),
      [],
      'the copies of generation 1 are forgotten',
    );
  },
);

R.run();
